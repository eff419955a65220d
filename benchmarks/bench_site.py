"""`infx site build` at InferenceX's scale: a history of 250 configs x 8 concurrencies x 200
main runs (400,000 points, simulated by tests/results/simulate.py with 2 % noise and a step
in every fifth config) in an SQLite file, built into a site. The history is filled through
its own tables (the first run through `History.ingest`, the rest bulk-inserted: ingesting
200 runs one by one takes about 5 minutes here).

Measured: the build (read the history, the noise model over every series, shape and write
every data file), the data the first page loads (the index), the largest Pareto page and
config page a reader opens next, and the whole site's size. Targets: build under 30 s, the
first page's data under 2 MB.
Run: python benchmarks/bench_site.py [--runs 200] [--configs 250] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import select

from infx.history import open_history
from infx.site.build import INDEX, build_site
from infx.site.facts import gather
from infx.site.write import ASSETS, write_site
from tests.results.simulate import Sweeps


def tables(runs: int, configs: int) -> Iterator[dict[str, Any]]:
    """Main's runs, oldest first; every fifth config steps down 8 % at two thirds."""
    sweeps = Sweeps(configs, noise=0.02, seed=3)
    for r in range(runs):
        doc = sweeps.run(
            10_000 + r, lambda i, c, r=r: 0.92 if i % 5 == 0 and r >= runs * 2 // 3 else 1.0
        )
        day, minute = divmod(r * 180, 1440)
        doc["run"]["created_at"] = (
            f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{minute // 60:02d}:{minute % 60:02d}:00Z"
        )
        yield doc


def fill(url: str, runs: int, configs: int) -> float:
    """The first run through `History.ingest` (it creates the schema, checks the table and
    adds the configs); the others bulk-inserted into the same tables, a run per
    transaction, split into points by the history's own `rows.point`."""
    from infx.history.database import engine
    from infx.history.rows import RunFacts, now, point, utc
    from infx.history.tables import configs as config_table
    from infx.history.tables import points
    from infx.history.tables import runs as run_table

    start = time.perf_counter()
    docs = tables(runs, configs)
    with open_history(url) as history:
        history.ingest(next(docs))
    made = engine(url)
    with made.begin() as conn:
        ids = {key: i for i, key in conn.execute(select(config_table.c.id, config_table.c.key))}
    for doc in docs:
        run = doc["run"]
        facts = RunFacts(run["id"], 1, run["sha"], run["ref"], run["url"], utc(run["created_at"]))
        with made.begin() as conn:
            conn.execute(
                run_table.insert(),
                [{"id": facts.id, "attempt": facts.attempt, "sha": facts.sha, "ref": facts.ref,
                  "url": facts.url, "created_at": facts.created_at, "reused_from": None,
                  "ingested_at": now()}],
            )  # fmt: skip
            found = [point(row)[2] for row in doc["rows"]]
            conn.execute(
                points.insert(),
                [{"run_id": facts.id, "config_id": ids[p.config], "kind": p.kind, "conc": p.conc,
                  "attempt": 1, "image": p.image, "fingerprint": p.fingerprint, "data": p.data}
                 for p in found],
            )  # fmt: skip
    made.dispose()
    return time.perf_counter() - start


def kb(size: int) -> str:
    return f"{size / 1e3:,.0f} kB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--configs", type=int, default=250)
    parser.add_argument("--keep", type=Path, default=None, help="keep the history and site here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-site-"))
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "history.sqlite"
    url = f"sqlite:///{database}"
    if not database.exists():
        spent = fill(url, args.runs, args.configs)
        print(
            f"filled the history: {args.runs} runs x {args.configs * 8:,} points in {spent:.0f} s"
        )
    print(f"history: {database} ({database.stat().st_size / 1e6:,.0f} MB)")
    out = folder / "site"

    start = time.perf_counter()
    facts = gather(url, folder)  # not a git repository: steps stay unexplained, with a note
    read = time.perf_counter()
    site = build_site(facts)
    shaped = time.perf_counter()
    write_site(out, site)
    done = time.perf_counter()
    total = done - start
    print(
        f"build: {total:.1f} s (target under 30 s): history, noise model and git {read - start:.1f} s, "
        f"shape {shaped - read:.1f} s, write {done - shaped:.1f} s"
    )
    print(f"  {len(facts.history.runs)} runs, {len(facts.history.configs)} configs")
    stepped = at = 0
    other = 0
    for config in facts.history.configs:
        ident = config.identity
        i = 8 * int(ident["model-prefix"][1:]) + ident["tp"] - 1  # simulate.config_row
        found = [s.run for s in facts.steps[config.slug].steps]
        if i % 5 == 0:
            stepped += 1
            at += (args.runs * 2 // 3) in found
            other += sum(1 for run in found if run != args.runs * 2 // 3)
        else:
            other += len(found)
    print(f"  steps: {at} of the {stepped} simulated ones found at their run; {other} elsewhere")
    assets = sum((out / name).stat().st_size for name in ASSETS)
    index = len(site.files[INDEX])
    print(
        f"first page: {kb(index)} of data (data/index.js; target under 2 MB) "
        f"+ {kb(assets)} of HTML, CSS and JavaScript"
    )
    pareto = max(len(d) for p, d in site.files.items() if p.startswith("data/pareto/"))
    config = max(len(d) for p, d in site.files.items() if p.startswith("data/config/"))
    print(
        f"opened next: the largest Pareto page {kb(pareto)}, the largest config page {kb(config)}"
    )
    whole = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"whole site: {len(site.files)} data files, {whole / 1e6:,.1f} MB")
    print(f"site: {out}")


if __name__ == "__main__":
    main()

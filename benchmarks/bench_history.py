"""The results history at a realistic size: 200 main runs of 2,000 rows each (250 configs x 8
concurrencies, every run a full sweep, ±2 % noise), on an SQLite file and on PostgreSQL.

Measured: the time to ingest one run (in process: validation, one transaction; and a whole
`infx results ingest` process), the same run ingested again (nothing changes),
`main_runs(limit=30, configs=...)` (rows, their JSON parsed) for every config of a
2,000-row pull request, for one config, and with no filter, `main_frame` (the numbers
`results compare` reads) for every config; the SQLite file's size. PostgreSQL runs on a throw-away local
server (tests/history/postgres.py), so it is skipped where none can start.
Run: python benchmarks/bench_history.py [--runs 200] [--configs 250] [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_results import rows as sweep_rows
from infx.history import open_history
from infx.results.ingest.process import document
from tests.history.postgres import create_database, server, unavailable

INFX = Path(sys.executable).parent / "infx"


def main_tables(runs: int, configs: int) -> Iterator[dict]:
    """Main's runs, oldest first: the same sweep with ±2 % noise on every number."""
    base = json.dumps(sweep_rows(configs, 1.0))
    rng = random.Random(7)
    for i in range(runs):
        rows = json.loads(base)
        for row in rows:
            row["metrics"] = {
                k: v * rng.uniform(0.98, 1.02) if isinstance(v, float) else v
                for k, v in row["metrics"].items()
            }
        minutes = i * 90
        yield document(
            rows,
            {
                "id": 10_000_000 + i,
                "attempt": 1,
                "sha": f"{i:040x}",
                "ref": "refs/heads/main",
                "url": f"https://github.com/acme/bench/actions/runs/{10_000_000 + i}",
                "created_at": f"2026-{1 + minutes // 43200:02d}-{1 + minutes // 1440 % 28:02d}"
                f"T{minutes // 60 % 24:02d}:{minutes % 60:02d}:00Z",
            },
        )


def timed(fn: Callable[[], object], repeat: int = 5) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def bench(name: str, url: str, runs: int, configs: int, folder: Path) -> None:
    print(f"\n{name}: {runs} main runs x {configs * 8:,} rows")
    ingest_times = []
    last = None
    with open_history(url) as history:
        for doc in main_tables(runs, configs):
            start = time.perf_counter()
            report = history.ingest(doc)
            ingest_times.append(time.perf_counter() - start)
            assert report.added == configs * 8
            last = doc
        assert last is not None
        ingest_times.sort()
        print(
            f"  ingest one run, in process: median {statistics.median(ingest_times):.2f} s, "
            f"p90 {ingest_times[int(len(ingest_times) * 0.9) - 1]:.2f} s, "
            f"total {sum(ingest_times):.0f} s"
        )
        again, report = timed(lambda: history.ingest(last), 3)
        assert not report.changed
        print(f"  the newest run again (nothing changes): median {again:.2f} s")
        wanted = [{k: v for k, v in row["identity"].items() if k != "conc"} for row in last["rows"]]
        spent, docs = timed(lambda: history.main_runs(limit=30, configs=wanted))
        assert len(docs) == 30 and sum(len(d["rows"]) for d in docs) == 30 * configs * 8
        print(
            f"  main_runs(limit=30, configs=<{configs} configs of a 2,000-row PR>): "
            f"median {spent:.2f} s ({30 * configs * 8:,} rows)"
        )
        spent, frame = timed(lambda: history.main_frame(limit=30, configs=wanted))
        assert len(frame) == 30 and len(frame.run) == 30 * configs * 8
        print(
            f"  main_frame(limit=30, configs=<{configs} configs>), the numbers `results "
            f"compare` reads: median {spent:.2f} s ({30 * configs * 8:,} points)"
        )
        spent, docs = timed(lambda: history.main_runs(limit=30, configs=wanted[:1]))
        assert len(docs) == 30 and sum(len(d["rows"]) for d in docs) == 30 * 8
        print(f"  main_runs(limit=30, configs=<1 config>): median {spent * 1000:.0f} ms")
        spent, docs = timed(lambda: history.main_runs(limit=30))
        print(f"  main_runs(limit=30): median {spent:.2f} s")
    table = folder / "results.json"
    table.write_text(json.dumps(last))
    cli = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(
            [str(INFX), "results", "ingest", str(table), "--history", url],
            check=True,
            capture_output=True,
        )
        cli.append(time.perf_counter() - start)
    print(
        f"  `infx results ingest` of the newest run again, whole process: "
        f"median {statistics.median(cli):.2f} s"
    )
    if url.startswith("sqlite:///"):
        size = Path(url.removeprefix("sqlite:///")).stat().st_size
        print(f"  SQLite file: {size / 2**20:.0f} MiB ({size / (runs * configs * 8):.0f} B/row)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--configs", type=int, default=250)
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="infx-bench-history-") as tmp:
        folder = Path(tmp)
        os.chdir(folder)
        if args.only in (None, "sqlite"):
            url = f"sqlite:///{folder / 'history.sqlite'}"
            bench("SQLite", url, args.runs, args.configs, folder)
        if args.only in (None, "postgresql"):
            reason = unavailable()
            if reason:
                print(f"\nPostgreSQL: skipped ({reason})")
                return
            with server() as base:
                bench(
                    "PostgreSQL 15 (local, fsync off)",
                    create_database(base, "bench"),
                    args.runs,
                    args.configs,
                    folder,
                )


if __name__ == "__main__":
    main()

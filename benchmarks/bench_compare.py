"""`infx results compare` of 2,000 pull request rows against a 200-run history (issue #32,
item 5: under 1 s), on SQLite and on PostgreSQL.

The history: 200 main runs of the simulated sweep of `tests/results/simulate.py` (250
configs x 8 concurrencies, 2 % noise, every run a full sweep), stored with `ingest`; the
comparison reads each config's newest 20 runs (`--history-runs 20`). Measured:

- the whole process as a user runs it (`infx results compare PR --history DB
  --history-runs 20`: start-up, reading and validating the table, the history, the model,
  the comment on stdout), with bytecode caching on as an installed infx has it
  (PYTHONDONTWRITEBYTECODE dropped, one run first), no GITHUB_STEP_SUMMARY; minimum and
  median wall time of `--repeat` runs and the CPU time of the fastest;
- where one process spends its CPU, stage by stage (imports; the table; the history read;
  the judge: matching and indexing, the model, the per-config verdicts; writing), by
  timing those functions in one process with process_time.

Figures are those of the machine it runs on; the repository's are in docs/benchmarks.md.
PostgreSQL runs on a throw-away local server (tests/history/postgres.py), skipped where
none can start. `--keep DIR` keeps (and reuses) the SQLite file and the tables.
Run: python benchmarks/bench_compare.py [--runs 200] [--window 20] [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Stage -> (module, function) timed in one process; nested stages are indented.
STAGES = (
    ("load the table(s)", "infx.history.compare", "load_results"),
    ("history read", "infx.history.compare", "_history"),
    ("judge", "infx.history.compare", "judge"),
    ("  matching (names)", "infx.results.verdict.judge", "matched"),
    ("  history indexed", "infx.results.noise.series", "History.of"),
    ("  arrays", "infx.results.verdict.judge", "arrays"),
    ("  model: fit", "infx.results.verdict.judge", "fit"),
    ("  model: pooling this PR's runs", "infx.results.verdict.judge", "pool"),
    ("  model: calibration (leave one out)", "infx.results.verdict.judge", "calibrate"),
    ("  model: curves", "infx.results.verdict.judge", "Measured"),
    ("  model: decide", "infx.results.verdict.judge", "decide"),
    ("  model: power", "infx.results.verdict.judge", "power"),
    ("  per-config verdicts", "infx.results.verdict.judge", "throughput_config"),
    ("outcome (texts are rendered when written)", "infx.history.compare", "outcome"),
    ("write: stdout, files", "infx.history.publish", "compared"),
)


def _history(runs: int) -> tuple[list[dict], dict]:
    from tests.results.simulate import Runs

    simulated = Runs(250, seed=7)
    docs = simulated.history(runs)
    for r, doc in enumerate(docs):
        day = r % 28 + 1
        doc["run"]["created_at"] = f"2026-{r // 28 % 12 + 1:02d}-{day:02d}T{r // 336:02d}:00:00Z"
    (pr,) = simulated.pr()
    assert len(pr["rows"]) == 2000
    return docs, pr


def _fill(url: str, docs: list[dict]) -> float:
    from infx.history import open_history

    start = time.perf_counter()
    with open_history(url) as history:
        if history.attempt_of(docs[-1]["run"]["id"]) is None:
            for doc in docs:
                history.ingest(doc)
    return time.perf_counter() - start


def _env() -> dict[str, str]:
    drop = ("GITHUB_STEP_SUMMARY", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def whole(args: list[str], repeat: int) -> tuple[float, float, float]:
    """(minimum wall, median wall, CPU of the fastest) of `repeat` processes."""
    subprocess.run(args, capture_output=True, env=_env(), check=False)  # bytecode, caches
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(args, capture_output=True, env=_env())
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        assert done.returncode in (0, 1), done.stderr[-2000:]
    fastest = walls.index(min(walls))
    return min(walls), statistics.median(walls), cpus[fastest]


def stages(args: list[str]) -> dict[str, float]:
    """CPU seconds per stage of one comparison, in a fresh process."""
    child = [sys.executable, __file__, "--stages-of", json.dumps(args)]
    done = subprocess.run(child, capture_output=True, text=True, env=_env(), check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _stages_of(args: list[str]) -> None:
    """The child of `stages`: time STAGES around one `infx` call, print them as JSON."""
    import contextlib
    import functools
    import importlib
    import io

    start = time.process_time()
    from infx.cli import cli

    for module in ("infx.cli.results", "infx.history.compare", "infx.history.publish"):
        importlib.import_module(module)
    imported = time.process_time() - start
    spent: dict[str, float] = {}

    def timed(name: str, fn: object) -> object:
        @functools.wraps(fn)  # type: ignore[arg-type]
        def wrapper(*a: object, **k: object) -> object:
            begun = time.process_time()
            try:
                result = fn(*a, **k)  # type: ignore[operator]
                if name.startswith("write"):
                    result = iter(list(result))  # a generator: its work happens here
                return result
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - begun

        return wrapper

    for name, module, attr in STAGES:
        owner: object = importlib.import_module(module)
        *path, last = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, last):
            continue
        found = getattr(owner, last)
        if isinstance(owner, type):  # a classmethod
            found = found.__func__
            setattr(owner, last, classmethod(timed(name, found)))
        else:
            setattr(owner, last, timed(name, found))
    begun = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli(args, prog_name="infx")
    command = time.process_time() - begun
    out = {"imports (start-up, the command's modules)": imported, **spent}
    out["all of the command (after imports)"] = command
    out["total CPU in process"] = time.process_time()
    print(json.dumps(out))


def bench(name: str, url: str, pr: Path, window: int, repeat: int) -> None:
    infx = [sys.executable, "-m", "infx", "results", "compare", str(pr)]
    args = ["--history", url, "--history-runs", str(window)]
    low, middle, cpu = whole([*infx, *args], repeat)
    print(
        f"\n{name}: infx results compare, 2,000 rows, window {window} runs (whole process): "
        f"min {low:.2f} s, median {middle:.2f} s wall; CPU {cpu:.2f} s (target under 1 s)"
    )
    found = stages(["results", "compare", str(pr), *args])
    print("  CPU per stage, one process:")
    first, *rest = found
    order = [first, *(name for name, _, _ in STAGES if name in found), *rest[-2:]]
    for stage in dict.fromkeys(order):
        print(f"    {stage:46s} {found[stage]:5.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--window", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--stages-of", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stages_of is not None:
        _stages_of(json.loads(args.stages_of))
        return 0
    docs, pr_doc = _history(args.runs)
    with tempfile.TemporaryDirectory(prefix="infx-bench-compare-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        os.chdir(folder)
        pr = folder / "pr.json"
        pr.write_text(json.dumps(pr_doc))
        print(f"history: {args.runs} main runs x 2,000 rows; load {os.getloadavg()[0]:.1f}")
        if args.only in (None, "sqlite"):
            url = f"sqlite:///{folder / f'history-{args.runs}.sqlite'}"
            print(f"SQLite filled in {_fill(url, docs):.0f} s")
            bench("SQLite", url, pr, args.window, args.repeat)
        if args.only in (None, "postgresql"):
            from tests.history.postgres import create_database, server, unavailable

            reason = unavailable()
            if reason:
                print(f"\nPostgreSQL: skipped ({reason})")
                return 0
            with server() as base:
                url = create_database(base, "bench")
                print(f"\nPostgreSQL 15 (local, fsync off) filled in {_fill(url, docs):.0f} s")
                bench("PostgreSQL", url, pr, args.window, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often `infx results compare` is right at InferenceX's scale, and how long it takes.

Simulated sweeps (`tests/results/simulate.py`, `Runs`): 20 main runs, 8 concurrencies, the
5 judged metrics, log-normal noise per point and metric of 2 % or 5 % of which a share of
0.4 is a run effect, shared by every config of a run (an image, a machine's day) or one
per config (a job's node). Per setting it prints:

- unchanged PR sweeps of 1, 30 and 250 configs: the share failing the gate (regressed;
  target at most 5 %), and the share with a config regressed or unconfirmed;
- a 5 % config-wide drop (throughput x 0.95, latencies / 0.95) of one config among 30:
  flagged (target 90 %), and regressed or unconfirmed;
- a 10 % drop of one point's throughput among 30 configs, with three PR runs pooled:
  flagged (target 90 %);
- main drifting -0.5 % per run (no step to cut at), the PR one run further: unchanged
  sweeps of 30 configs failing, and regressed or unconfirmed.

Then the time of one comparison of 2,000 PR rows (250 configs x 8) against a 20-run
history, in process and as whole `infx results compare` processes (a history folder,
and an SQLite results database filled by `infx results ingest`; target under 1 s), and of
one `infx results ingest` of a 2,000-row table as a whole process, into a new SQLite
database (which creates its schema) and into one holding a run already (target under
1 s). Whole processes run with bytecode caching on, as an installed infx has it
(PYTHONDONTWRITEBYTECODE is dropped from their environment and each command runs once
first); the figures are minimums, the machine being shared.

Run: python benchmarks/bench_verdicts.py [--trials N] [--no-timing] [--no-accuracy]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from infx.results.verdict.judge import compare
from infx.results.verdict.words import REGRESSED, UNCONFIRMED
from tests.results.simulate import CONCS, Runs

RUNS = 20
DRIFT = -0.005


def judge(runs: Runs, history: list[dict], tables: list[dict]) -> tuple[bool, bool, dict]:
    """(gate fails, a config regressed or unconfirmed, verdict per config index)."""
    report = compare(tables[0]["rows"], history, repeats=[t["rows"] for t in tables[1:]])
    verdicts = {_index(c.identity): c.verdict for c in report.configs}
    loose = report.failing or any(v in (REGRESSED, UNCONFIRMED) for v in verdicts.values())
    return report.failing, loose, verdicts


def _index(identity: dict) -> int:
    return int(identity["model-prefix"][1:]) * 8 + identity["tp"] - 1


def drop(configs: int, target: int, pct: float) -> np.ndarray:
    effect = np.zeros((configs, len(CONCS), 5))
    step = np.log1p(-pct / 100)
    effect[target] = step * np.array([1.0, -1.0, -1.0, -1.0, -1.0])
    return effect


def point_drop(configs: int, target: int, point: int, pct: float) -> np.ndarray:
    effect = np.zeros((configs, len(CONCS), 5))
    effect[target, point, 0] = np.log1p(-pct / 100)
    return effect


def rate(hits: list[bool]) -> str:
    return f"{sum(hits) / len(hits):5.1%}"


def setting(noise: float, shared: bool, trials: int) -> None:
    where = "shared by the sweep" if shared else "one per config"
    print(f"\nnoise {noise:.0%} per point and metric, run effect 0.4 of it, {where}")
    seed = 0
    for configs, n in ((1, trials * 5), (30, trials * 2), (250, max(10, trials // 2))):
        fail, loose = [], []
        for _ in range(n):
            seed += 1
            runs = Runs(configs, noise=noise, shared=shared, seed=seed)
            f, lo, _ = judge(runs, runs.history(RUNS), runs.pr())
            fail.append(f)
            loose.append(lo)
        print(
            f"  unchanged, {configs:3d} config(s), {n:3d} sweeps: gate fails {rate(fail)} "
            f"(target <= 5 %); regressed or unconfirmed {rate(loose)}"
        )
    for name, pct, repeats in (("drop5", 5.0, 1), ("point10", 10.0, 3)):
        flagged, loose, others = [], [], 0
        for _ in range(trials):
            seed += 1
            runs = Runs(30, noise=noise, shared=shared, seed=seed)
            rng = np.random.default_rng(seed)
            target = int(rng.integers(0, 30))
            if name == "drop5":
                effect = drop(30, target, pct)
            else:
                effect = point_drop(30, target, int(rng.integers(0, len(CONCS))), pct)
            _, _, verdicts = judge(runs, runs.history(RUNS), runs.pr(repeats, effect))
            flagged.append(verdicts[target] == REGRESSED)
            loose.append(verdicts[target] in (REGRESSED, UNCONFIRMED))
            others += sum(v == REGRESSED for i, v in verdicts.items() if i != target)
        text = (
            "a 5 % config-wide drop, 1 PR run"
            if name == "drop5"
            else "a 10 % drop of one point's throughput, 3 PR runs"
        )
        print(
            f"  {text} (30 configs, {trials} trials): flagged {rate(flagged)} (target 90 %); "
            f"regressed or unconfirmed {rate(loose)}; other configs regressed: {others}"
        )
    fail, loose = [], []
    for _ in range(trials):
        seed += 1
        runs = Runs(30, noise=noise, shared=shared, seed=seed)
        history = runs.history(RUNS, drift=DRIFT)
        f, lo, _ = judge(runs, history, runs.pr(level=np.log1p(DRIFT) * RUNS))
        fail.append(f)
        loose.append(lo)
    print(
        f"  main drifting {DRIFT:.1%} per run, unchanged PR one run further (30 configs, "
        f"{trials} sweeps): gate fails {rate(fail)}; regressed or unconfirmed {rate(loose)}"
    )


def accuracy(trials: int) -> None:
    start = time.perf_counter()
    for noise in (0.02, 0.05):
        for shared in (True, False):
            setting(noise, shared, trials)
    print(f"\n({time.perf_counter() - start:.0f} s)")


def _run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, env=env)
    wall = time.perf_counter() - start
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return wall


def timing(folder: Path) -> None:
    runs = Runs(250, seed=7)
    history = runs.history(RUNS)
    for r, doc in enumerate(history):
        doc["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
    (pr,) = runs.pr()
    assert len(pr["rows"]) == 2000
    times = []
    for _ in range(5):
        start = time.perf_counter()
        compare(pr["rows"], history)
        times.append(time.perf_counter() - start)
    print(
        f"compare 2,000 PR rows against {RUNS} main runs, in process: "
        f"median {statistics.median(times):.2f} s (min {min(times):.2f})"
    )
    (folder / "history").mkdir()
    for doc in history:
        (folder / "history" / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    (folder / "pr.json").write_text(json.dumps(pr))
    drop = ("GITHUB_STEP_SUMMARY", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    infx = [sys.executable, "-m", "infx", "results"]
    first, second = (folder / "history" / f"{doc['run']['id']}.json" for doc in history[:2])
    fresh, held = [], []
    for n in range(4):
        database = folder / f"ingest{n}.sqlite"
        fresh.append(_run([*infx, "ingest", str(first), "--history", str(database)], env))
        held.append(_run([*infx, "ingest", str(second), "--history", str(database)], env))
    print(
        "infx results ingest of 2,000 rows (whole process): into a new SQLite database "
        f"min {min(fresh[1:]):.2f} s, into one holding a run min {min(held[1:]):.2f} s"
    )
    database = folder / "history.sqlite"
    for doc in history:
        path = folder / "history" / f"{doc['run']['id']}.json"
        _run([*infx, "ingest", str(path), "--history", str(database)], env)
    base = [*infx, "compare", str(folder / "pr.json"), "--history-runs", str(RUNS)]
    for where, text in (
        (folder / "history", f"a {RUNS}-run history folder"),
        (database, f"an SQLite results database of {RUNS} runs"),
    ):
        wall = [_run([*base, "--history", str(where)], env) for _ in range(4)][1:]
        print(
            f"infx results compare (whole process) with {text}: "
            f"median {statistics.median(wall):.2f} s (min {min(wall):.2f})"
        )
    code = "import infx.results.verdict.judge"
    wall = [_run([sys.executable, "-c", code], env) for _ in range(3)]
    print(f"python -c '{code}' (NumPy and the noise model): min {min(wall):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--no-accuracy", action="store_true")
    args = parser.parse_args()
    if not args.no_accuracy:
        accuracy(args.trials)
    if not args.no_timing:
        with tempfile.TemporaryDirectory() as tmp:
            timing(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often `infx results compare` is right, and how long it takes, on simulated histories.

Every trial builds main's history of 20 runs of 30 configs x 8 concurrencies with seeded
log-normal noise per point and metric (2 % by default) and, per config, 0 to 2 steps from
new images (throughput x 0.85 to 1.15, latencies the inverse) at random runs; the pull
request's run sits at main's newest level, then:

- A/A: nothing changed. Counted: configs judged regressed (false alarms per config), and
  configs judged improved.
- a 5 % config-wide drop (throughput x 0.95, latencies / 0.95) of one config: flagged?
- a 10 % single-point drop (throughput of one point x 0.90): flagged?
- a coverage loss (the PR measures 3 of a config's 8 concurrencies): flagged?

Then the time of one comparison of 2,000 points against 30 main runs (in process), of a
2,000 x 2,000-row comparison with one baseline run through the CLI, and the same with a
30-run history folder through the CLI.
Run: python benchmarks/bench_verdicts.py [--trials N] [--noise 0.02]
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

from infx.results.compare import IMPROVED, MISSING, REGRESSED
from infx.results.verdict import compare
from tests.results.simulate import CONCS, Sweeps

CONFIGS, RUNS = 30, 20


def steps_of(rng: np.random.Generator) -> list[list[tuple[int, float]]]:
    """Per config, 0-2 (run index, factor) steps from new images."""
    out = []
    for _ in range(CONFIGS):
        count = int(rng.integers(0, 3))
        at = sorted(rng.choice(np.arange(2, RUNS), size=count, replace=False).tolist())
        out.append([(int(r), float(rng.uniform(0.85, 1.15))) for r in at])
    return out


def level(steps: list[tuple[int, float]], run: int) -> float:
    f = 1.0
    for at, factor in steps:
        if run >= at:
            f *= factor
    return f


def trial(seed: int, noise: float) -> dict[str, int]:
    sweeps = Sweeps(CONFIGS, noise=noise, seed=seed)
    rng = np.random.default_rng(seed + 10_000)
    steps = steps_of(rng)
    history = sweeps.history(RUNS, lambda i, c, r: level(steps[i], r))
    now = [level(s, RUNS) for s in steps]
    target = int(rng.integers(0, CONFIGS))
    point = int(rng.choice(CONCS))
    keep3 = set(rng.choice(CONCS, size=3, replace=False).tolist())
    cases = {
        "aa": (lambda i, c: now[i], lambda i, c: True),
        "drop5": (lambda i, c: now[i] * (0.95 if i == target else 1.0), lambda i, c: True),
        "point10": (
            lambda i, c: now[i] * (0.90 if i == target and c == point else 1.0),
            lambda i, c: True,
        ),
        "coverage": (lambda i, c: now[i], lambda i, c: i != target or c in keep3),
    }
    out = {}
    for name, (factor, keep) in cases.items():
        if name == "point10":
            pr = sweeps.run(9000, lambda i, c: now[i])
            for row in pr["rows"]:
                if row["identity"]["conc"] == point and _index(row) == target:
                    row["metrics"]["tput_per_gpu"] *= 0.90
        else:
            pr = sweeps.run(9000, factor, keep=keep)
        report = compare(pr["rows"], history)
        verdicts = {_index_of(c.identity): c.verdict for c in report.configs}
        lost = {_index_of(c.identity): c.count(MISSING) for c in report.configs}
        if name == "aa":
            out["aa_regressed"] = sum(v == REGRESSED for v in verdicts.values())
            out["aa_improved"] = sum(v == IMPROVED for v in verdicts.values())
        else:
            if name == "coverage":  # named as lost (a regression may outrank it) and gating
                out[name] = int(lost[target] == 5 and report.failing)
            else:
                out[name] = int(verdicts[target] == REGRESSED)
            out[f"{name}_others"] = sum(v == REGRESSED for i, v in verdicts.items() if i != target)
    return out


def _index(row: dict) -> int:
    return _index_of(row["identity"])


def _index_of(identity: dict) -> int:
    return int(identity["model-prefix"][1:]) * 8 + identity["tp"] - 1


def accuracy(trials: int, noise: float) -> None:
    totals: dict[str, int] = {}
    start = time.perf_counter()
    for seed in range(trials):
        for key, value in trial(seed, noise).items():
            totals[key] = totals.get(key, 0) + value
    configs = trials * CONFIGS
    print(
        f"{trials} trials, {CONFIGS} configs x {len(CONCS)} points, {RUNS} main runs, "
        f"noise {noise:.1%} per point and metric, 0-2 image steps per config "
        f"({time.perf_counter() - start:.0f} s)"
    )
    print(
        f"A/A: {totals['aa_regressed']} of {configs} configs judged regressed "
        f"({totals['aa_regressed'] / configs:.1%}; target <= 5 %), "
        f"{totals['aa_improved']} improved ({totals['aa_improved'] / configs:.1%})"
    )
    for name, text in (
        ("drop5", "5 % config-wide drop"),
        ("point10", "10 % single-point drop"),
        ("coverage", "coverage loss (3 of 8 points)"),
    ):
        target = "100 %" if name == "coverage" else ">= 90 %"
        print(
            f"{text}: flagged in {totals[name]} of {trials} ({totals[name] / trials:.0%}; "
            f"target {target}); other configs judged regressed: {totals[name + '_others']}"
        )


def timing(folder: Path) -> None:
    sweeps = Sweeps(250, seed=7)
    history = sweeps.history(30)
    pr = sweeps.run(9000)
    assert len(pr["rows"]) == 2000
    times = []
    for _ in range(3):
        start = time.perf_counter()
        compare(pr["rows"], history)
        times.append(time.perf_counter() - start)
    print(
        f"compare 2,000 points against 30 main runs, in process: "
        f"median {statistics.median(times):.2f} s"
    )
    (folder / "history").mkdir()
    for doc in history:
        (folder / "history" / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    (folder / "pr.json").write_text(json.dumps(pr))
    (folder / "main.json").write_text(json.dumps(history[-1]))
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    base = [sys.executable, "-m", "infx", "results", "compare", str(folder / "pr.json")]
    for args, text in (
        (["--baseline", str(folder / "main.json")], "one baseline run (2,000 x 2,000 rows)"),
        (["--history", str(folder / "history")], "a 30-run history folder"),
    ):
        wall = []
        for _ in range(3):
            start = time.perf_counter()
            done = subprocess.run([*base, *args], capture_output=True, env=env)
            wall.append(time.perf_counter() - start)
            assert done.returncode in (0, 1), done.stderr[-2000:]
        print(f"infx results compare (CLI) with {text}: median {statistics.median(wall):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    accuracy(args.trials, args.noise)
    if not args.no_timing:
        with tempfile.TemporaryDirectory() as tmp:
            timing(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())

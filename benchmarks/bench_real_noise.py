"""How often the verdict is wrong on real GPU runs: both real sets, each judged on its own
main runs, with nothing carried from one set to the other but the model's structure.

Sets: tests/data/gpu-noise-h200 (16 main, 8 unchanged, 6 eager-attention runs) and
tests/data/gpu-noise-h200-stepcost (12 main, 6 unchanged, 6 runs of a 2-4 % change). Every
job folder goes through `infx results process` and every run through `collect`, as in
`tests/results/verdict/test_real_noise.py`; the judging is `infx.results.verdict.judge`,
in process. Per set and history window (10 runs, and all of main's runs), it prints:

- unchanged (A/A) single runs and pooled triples failing the gate, the change's single
  runs and pooled triples failing it;
- leave one out: main's runs judged as PRs against the others, how many would fail;
- the same with main's newest run flaky (25 % slow in every point and metric).

Then #32's "fit on one set, judge on the other", both ways. The gated model fits nothing
across sets (each set is judged against its own main runs, the model's input); what can be
taken from data is fitted on one set and used on the other:

- the rate the gate runs at: the named false-fail rate (0.05), held unless main's own runs,
  each left out and judged as a PR (the product's calibration), fail significantly more
  often than it (a one-sided binomial test at 0.05); then halved until they do not;
- the advisory lines' tail (below).

and the other set's unchanged singles and pooled triples failing and the change's caught,
at all of its main runs (the default window of 20 holds them all).

And the one constant that could be fitted to data, the heaviest tail an advisory line
(TTFT, p99) is judged with: fitted on one set (the fewest degrees of freedom of Student's
t under which main's own runs, left out one at a time, land beyond their band at most
ADVISORY_ALPHA of the time), then the other set's unchanged runs judged with it, both
ways, beside the fixed TAIL_DF the product uses.

Run: python benchmarks/bench_real_noise.py [--windows 10,0]   (0: all of main's runs)
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import sys
import tarfile
import tempfile
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from click.testing import CliRunner

from infx.cli import cli
from infx.results.noise import tdist
from infx.results.verdict import power as power_module
from infx.results.verdict.calibration import beyond_chance
from infx.results.verdict.decide import ADVISORY_ALPHA, TAIL_DF, Q
from infx.results.verdict.judge import compare

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SETS = {
    "gpu-noise-h200": ("part1.tar.gz", "part2.tar.gz"),
    "gpu-noise-h200-stepcost": ("hold1.tar.gz", "hold2.tar.gz"),
}
ADVISORY = ("median_ttft", "p99_ttft", "p99_tpot")
TAILS = (1, 2, 3, 4, 5, 8, 12, 20, 50)


def _ok(args: list[str]) -> None:
    done = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output


def tables(name: str, root: Path) -> dict[str, dict[str, Any]]:
    """kind -> run name -> its results table, oldest first (main runs in their order)."""
    for part in SETS[name]:
        with tarfile.open(DATA / name / part) as archive:
            archive.extractall(root, filter="data")
    out: dict[str, dict[str, Any]] = {"main": {}, "aa": {}, "change": {}}
    for i, (kind, run_dir) in enumerate(
        (k, d) for k in out for d in sorted((root / "jobs" / k).iterdir())
    ):
        for job in sorted(p for p in run_dir.iterdir() if p.is_dir()):
            _ok(["results", "process", "--row", (job / "row.json").read_text(),
                 "--results-dir", str(job)])  # fmt: skip
        sha = f"{i:040x}" if kind == "main" else kind[0] * 40
        ref = "refs/heads/main" if kind == "main" else "refs/pull/9/merge"
        folder = root / "tables" / run_dir.name
        _ok(["results", "collect", str(run_dir), "--out-dir", str(folder), "--run-id",
             str(7000 + i), "--sha", sha, "--ref", ref])  # fmt: skip
        out[kind][run_dir.name] = json.loads((folder / "results.json").read_text())
    return out


def flaky(history: list[dict[str, Any]], factor: float = 0.75) -> list[dict[str, Any]]:
    """Main's newest run `factor` as fast in every point and metric (a flaky node)."""
    newest = copy.deepcopy(history[-1])
    for row in newest["rows"]:
        m = row["metrics"]
        for key in list(m):
            if "tput" in key or key.endswith("_intvty"):
                m[key] *= factor
            elif key.endswith(("_ttft", "_tpot", "_itl", "_e2el")):
                m[key] /= factor
    return [*history[:-1], newest]


def figures(runs: dict[str, dict[str, Any]], history: list[dict[str, Any]], q: float = Q) -> str:
    def fails(names: tuple[str, ...], kind: str) -> bool:
        first, *rest = (runs[kind][n]["rows"] for n in names)
        return compare(first, history, repeats=rest, q=q).failing

    out = []
    for kind, word in (("aa", "unchanged"), ("change", "change")):
        names = sorted(runs[kind])
        singles = sum(fails((n,), kind) for n in names)
        triples = list(itertools.combinations(names, 3))
        pooled = sum(fails(t, kind) for t in triples)
        out.append(f"{word} singles fail {singles}/{len(names)}, triples {pooled}/{len(triples)}")
    report = compare(runs["aa"][sorted(runs["aa"])[0]]["rows"], history, q=q)
    judged, failed = report.calibration or (0, 0)
    out.append(f"leave one out: {failed} of {judged} main runs would fail")
    return "; ".join(out)


def held_rate(history: list[dict[str, Any]], any_pr: list[dict[str, Any]]) -> tuple[float, str]:
    """The rate the product's gate runs at on this history: `compare` holds the named Q
    itself (infx.results.verdict.calibration.held, leave one run out, one-sided binomial
    test at 0.05, halving only while it fails fewer runs); this reads what it chose."""
    report = compare(any_pr, history, q=Q)
    q = Q if report.q_held is None else report.q_held
    judged, failed = report.calibration or (0, 0)
    p_value = beyond_chance(failed, judged, Q)
    return q, f"leave one out at {Q:g}: {failed} of {judged} fail (binomial p {p_value:.2f})"


def _loo_tail_rates(history: list[dict[str, Any]]) -> dict[int, float]:
    """Per degrees of freedom: the share of main's advisory values, each left out and
    judged against the others' mean and scatter, beyond the band that tail gives."""
    series: dict[tuple[str, int, str], list[float]] = {}
    for doc in history:
        for row in doc["rows"]:
            ident = {k: v for k, v in row["identity"].items() if k != "conc"}
            key = json.dumps(ident, sort_keys=True)
            for metric in ADVISORY:
                value = row["metrics"].get(metric)
                if isinstance(value, int | float) and value > 0:
                    series.setdefault((key, row["identity"]["conc"], metric), []).append(
                        float(np.log(value))
                    )
    ts = []
    for values in series.values():
        x = np.array(values)
        n = len(x)
        for r in range(n):
            rest = np.delete(x, r)
            ts.append((x[r] - rest.mean()) / (rest.std(ddof=1) * np.sqrt(1 + 1 / (n - 1))))
    t = np.abs(np.array(ts))
    n = len(history)
    rates = {}
    for nu in TAILS:
        crit = float(tdist.t_quantile(1 - ADVISORY_ALPHA / 2, min(n - 2, nu)))
        rates[nu] = float((t > crit).mean())
    return rates


def fitted_tail(history: list[dict[str, Any]]) -> int:
    """The most degrees of freedom (the lightest tail) under which main's own advisory
    values land beyond their band at most ADVISORY_ALPHA of the time."""
    rates = _loo_tail_rates(history)
    ok = [nu for nu in TAILS if rates[nu] <= ADVISORY_ALPHA]
    return max(ok) if ok else min(TAILS)


def advisory_beyond(runs: dict[str, dict[str, Any]], history: list[dict[str, Any]], nu: int) -> str:
    saved = power_module.TAIL_DF
    power_module.TAIL_DF = nu
    try:
        beyond = total = 0
        for name in sorted(runs["aa"]):
            report = compare(runs["aa"][name]["rows"], history)
            for config in report.configs:
                for point in config.points:
                    for check in point.checks:
                        if check.advisory and check.band_pct is not None:
                            total += 1
                            beyond += check.beyond
    finally:
        power_module.TAIL_DF = saved
    return f"{beyond}/{total} advisory lines of unchanged runs beyond their band"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--windows", default="10,0", help="history runs (0: all), comma-separated; empty: none"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        found = {name: tables(name, Path(tmp) / name) for name in SETS}
        for name, runs in found.items():
            main_runs = list(runs["main"].values())
            for window in (int(w) for w in args.windows.split(",") if w):
                history = main_runs[-window:] if window else main_runs
                label = f"{len(history)} main runs"
                print(f"{name}, {label}: {figures(runs, history)}", flush=True)
                print(f"{name}, {label}, newest flaky: {figures(runs, flaky(history))}", flush=True)
        names = list(found)
        for fit_on, judge_on in (names, names[::-1]):
            fit_main = list(found[fit_on]["main"].values())
            q, said = held_rate(fit_main, next(iter(found[fit_on]["aa"].values()))["rows"])
            history = list(found[judge_on]["main"].values())
            print(
                f"fitted on {fit_on} ({said}: the gate runs at {q:g}); judged on {judge_on}, "
                f"{len(history)} main runs: {figures(found[judge_on], history, q)}",
                flush=True,
            )
        for fit_on, judge_on in (names, names[::-1]):
            nu = fitted_tail(list(found[fit_on]["main"].values()))
            history = list(found[judge_on]["main"].values())
            print(
                f"advisory tail fitted on {fit_on}: t with {nu} df; judged on {judge_on}: "
                f"{advisory_beyond(found[judge_on], history, nu)} (with the product's "
                f"{TAIL_DF}: {advisory_beyond(found[judge_on], history, TAIL_DF)})",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

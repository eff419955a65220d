"""The verdict stressed with resamplings of the two real H200 sets: histories such runs
could have, and how often an unchanged run fails or a real change passes against them.

Data and loaders: `benchmarks/bench_real_noise.py` (every job through `infx results
process`, every run through `collect`); the judging is `infx.results.verdict.judge.compare`,
in process, what `infx results compare` calls, with the CLI's default window of 20 main runs
(`history_runs=20`) and the default false-fail rate. Every scenario builds main histories
from one set's (or both sets') real main runs and judges that set's unchanged runs (A/A) and
change runs against each, as singles, pooled pairs and pooled triples (`repeats`):

- `window oldest|newest k`: main's oldest or newest k runs, k = 5 .. all;
- `window sliding k`: every k consecutive main runs (k = 5, 8);
- `random k`: random subsets of k of main's runs, kept in time order;
- `drop config` / `drop conc`: one config, or one or two concurrencies, left out of main's
  runs and the PR's alike;
- `rolling`: each main run judged as a PR against the w main runs before it (w = 5, 8, all),
  and `leave one out`: against all the others; these count as unchanged singles;
- `conc added lately`: one concurrency measured in main's newest 1, 2 or 3 runs only (a
  sweep's concurrencies extended), judged as the PR measures it;
- `shuffled`: main's runs in random orders; `noisiest newest|oldest`: ordered by how far
  their throughput runs from main's mean, the farthest newest (or oldest);
- `flaky <where> xF`: one main run (newest, middle, oldest) F as fast in every metric;
  `flaky newest 2`: main's two newest runs so;
- `mixed`: the other set's main runs first, this set's newest (a machine or software change
  between them), with 1, 2, 3, 5 and all of this set's runs after it;
- the same judged through the real CLI (`--cli`: `infx results ingest` into a tmp SQLite,
  `infx results compare --history DB` from a folder without `infx.toml`) for the full
  history and the flaky-newest one (slower: one process per judgment).

Printed per scenario: unchanged singles / pairs / triples failing, change singles /
pairs / triples caught (the gate fails) and missed (within noise or improved; the rest of
the uncaught read unconfirmed: the gate passes, the comment asks for repeats), as k/n, with the one-sided binomial p of the unchanged failures
against 5 % (the judgments of one scenario share runs, so they are not independent: the p
is a guide, not a test). No timing is asserted.

Run: python benchmarks/bench_noise_stress.py [--seed 1] [--random 12] [--cli]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_real_noise import DATA, SETS, flaky, tables
from infx.results.verdict.judge import compare
from infx.results.verdict.words import COVERAGE_LOST, REGRESSED, UNCONFIRMED

Doc = dict[str, Any]
WINDOW = 20  # the CLI's default --history-runs
FAILING = (REGRESSED, COVERAGE_LOST)


def scaled(doc: Doc, factor: float) -> Doc:
    """One run `factor` as fast in every point and metric (`flaky` on one run)."""
    return flaky([doc], factor)[0]


def dropped(doc: Doc, keep: Any) -> Doc:
    out = copy.deepcopy(doc)
    out["rows"] = [r for r in out["rows"] if keep(r["identity"])]
    return out


def mean_tput(doc: Doc) -> float:
    rows = [r for r in doc["rows"] if "tput_per_gpu" in r["metrics"]]
    return sum(r["metrics"]["tput_per_gpu"] for r in rows) / len(rows)


def deviation(doc: Doc, history: list[Doc]) -> float:
    """How far a run's throughput runs from main's mean, point by point (log ratio, mean)."""
    means: dict[str, float] = {}
    for h in history:
        for r in h["rows"]:
            k = json.dumps(r["identity"], sort_keys=True)
            means[k] = means.get(k, 0.0) + math.log(r["metrics"]["tput_per_gpu"]) / len(history)
    d = [
        math.log(r["metrics"]["tput_per_gpu"]) - means[json.dumps(r["identity"], sort_keys=True)]
        for r in doc["rows"]
    ]
    return sum(d) / len(d)


def histories(
    name: str, found: dict[str, dict[str, dict[str, Doc]]], rng: random.Random, draws: int
) -> Iterator[tuple[str, list[Doc], Any]]:
    """(scenario, main history, filter of the PR's rows or None)."""
    runs = found[name]
    main = list(runs["main"].values())
    n = len(main)
    for k in range(5, n + 1):
        yield f"window oldest k (k=5..{n})", main[:k], None
    for k in range(5, n + 1):
        yield f"window newest k (k=5..{n})", main[-k:], None
    for k in (5, 8):
        for s in range(n - k + 1):
            yield f"window sliding {k}", main[s : s + k], None
    for k in (5, 8, 11):
        for _ in range(draws):
            pick = sorted(rng.sample(range(n), k))
            yield f"random {k}", [main[i] for i in pick], None
    prefixes = sorted({r["identity"]["model-prefix"] for r in main[0]["rows"]})
    concs = sorted({r["identity"]["conc"] for r in main[0]["rows"]})
    for p in prefixes:

        def keep_p(i: Doc, p: str = p) -> bool:
            return bool(i["model-prefix"] != p)

        yield "drop config", [dropped(d, keep_p) for d in main], keep_p
    for c in [(c,) for c in concs] + list(itertools.combinations(concs, 2)):

        def keep_c(i: Doc, c: tuple[int, ...] = c) -> bool:
            return i["conc"] not in c

        yield "drop conc (1 or 2)", [dropped(d, keep_c) for d in main], keep_c
    for c in concs:
        for j in (1, 2, 3):

            def lacks(i: Doc, c: int = c) -> bool:
                return bool(i["conc"] != c)

            h = [dropped(d, lacks) for d in main[:-j]] + main[-j:]
            yield f"conc added lately: conc {c} in main's newest {j} only", h, None
    for _ in range(draws):
        yield "shuffled", rng.sample(main, n), None
    far = sorted(main, key=lambda d: abs(deviation(d, main)))
    yield "noisiest newest", far, None
    yield "noisiest oldest", far[::-1], None
    for factor in (0.75, 0.85, 0.9, 1.15):
        for where, i in (("newest", n - 1), ("middle", n // 2), ("oldest", 0)):
            h = list(main)
            h[i] = scaled(h[i], factor)
            yield f"flaky {where} x{factor:g}", h, None
    for factor in (0.75, 0.9):
        yield (
            f"flaky newest 2 x{factor:g}",
            [*main[:-2], *(scaled(d, factor) for d in main[-2:])],
            None,
        )
    other = next(o for o in found if o != name)
    before = list(found[other]["main"].values())
    for k in (1, 2, 3, 5, n):
        yield (
            f"mixed: other set, then this set's {k if k < n else 'all'}",
            [*before, *main[:k]],
            None,
        )


def judge(first: list[Any], history: list[Doc], rest: list[list[Any]], keep: Any) -> str:
    """The run's verdict."""
    if keep is not None:
        first = [r for r in first if keep(r["identity"])]
        rest = [[r for r in t if keep(r["identity"])] for t in rest]
    return str(compare(first, history, history_runs=WINDOW, repeats=rest).verdict)


def tally(
    runs: dict[str, dict[str, Doc]], history: list[Doc], keep: Any, counts: dict[str, list[int]]
) -> None:
    for kind in ("aa", "change"):
        names = sorted(runs[kind])
        for size in (1, 2, 3):
            for group in itertools.combinations(names, size):
                first, *rest = (runs[kind][g]["rows"] for g in group)
                count(counts, kind, size, judge(first, history, rest, keep))


def count(counts: dict[str, list[int]], kind: str, size: int, verdict: str) -> None:
    """One judgment of `size` pooled runs of `kind`: failing, and for a change missed
    (neither failing nor unconfirmed)."""
    c = counts.setdefault(f"{kind}{size}", [0, 0])
    c[0] += verdict in FAILING
    c[1] += 1
    if kind == "change":
        m = counts.setdefault(f"miss{size}", [0, 0])
        m[0] += verdict not in (*FAILING, UNCONFIRMED)
        m[1] += 1


def started(name: str) -> dict[str, float]:
    """Run name -> when its first job started (the client's `benchmark_start_time_unix`)."""
    out: dict[str, float] = {}
    for part in SETS[name]:
        with tarfile.open(DATA / name / part) as archive:
            for member in archive:
                m = re.fullmatch(r".*jobs/\w+/(\w+)/[^/]+/([^/]+)\.json", member.name)
                if m and m.group(2) not in ("row", "details"):
                    f = archive.extractfile(member)
                    assert f is not None
                    t = json.load(f)["benchmark_start_time_unix"]
                    out[m.group(1)] = min(out.get(m.group(1), t), t)
    return out


def in_time(
    name: str, found: dict[str, dict[str, dict[str, Doc]]], counts: dict[str, dict[str, list[int]]]
) -> None:
    """Each unchanged or change run (and pooled pair and triple) judged against main's runs
    measured before it (before the group's newest run), the newest k of them (k = 5, 8, all
    up to the window of 20), from 5 such runs on: a history as the PR would have met it."""
    runs = found[name]
    when = started(name)
    main = sorted(runs["main"], key=when.__getitem__)
    for k in (5, 8, WINDOW):
        scenario = counts.setdefault(f"in time, newest {k if k < WINDOW else 'all'} before", {})
        for kind in ("aa", "change"):
            for size in (1, 2, 3):
                for group in itertools.combinations(sorted(runs[kind]), size):
                    last = max(when[g] for g in group)
                    before = [runs["main"][m] for m in main if when[m] < last][-k:]
                    if len(before) < 5:
                        continue
                    first, *rest = (runs[kind][g]["rows"] for g in group)
                    count(scenario, kind, size, judge(first, before, rest, None))


def own_runs(name: str, main: list[Doc]) -> Iterator[tuple[str, Doc, list[Doc]]]:
    """Main's runs judged as PRs: rolling (the w runs before each) and leave one out."""
    for w in (5, 8, 0):
        for i in range(5, len(main)):
            before = main[:i] if w == 0 else main[max(0, i - w) : i]
            if len(before) >= 5:
                yield f"rolling, {w or 'all'} runs before", main[i], before
    for i in range(len(main)):
        yield "leave one out", main[i], main[:i] + main[i + 1 :]


def upper_p(k: int, n: int, q: float = 0.05) -> float:
    """One-sided binomial p of k or more failures in n at the rate q (log space: n is large)."""
    if k == 0:
        return 1.0
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        + i * math.log(q) + (n - i) * math.log1p(-q)
        for i in range(k, n + 1)
    ]  # fmt: skip
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def fmt(c: list[int] | None) -> str:
    return "-" if c is None else f"{c[0]}/{c[1]}"


def cli_path(found: dict[str, dict[str, dict[str, Doc]]]) -> None:
    """The real CLI: ingest main's runs into a tmp SQLite, compare from a folder without
    infx.toml (the `[results]` defaults)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, runs in found.items():
            for label, history in (
                ("all of main", list(runs["main"].values())),
                ("newest flaky x0.75", flaky(list(runs["main"].values()))),
            ):
                db = root / f"{name}-{label.split()[0]}.sqlite"
                for i, doc in enumerate(history):
                    doc = copy.deepcopy(doc)
                    doc["run"]["created_at"] = f"2026-12-01T00:{i:02d}:00Z"
                    path = root / "t.json"
                    path.write_text(json.dumps(doc))
                    _run(["results", "ingest", str(path), "--history", str(db)], root)
                counts: dict[str, list[int]] = {}
                for kind in ("aa", "change"):
                    for run_name, doc in sorted(runs[kind].items()):
                        path = root / f"{run_name}.json"
                        path.write_text(json.dumps(doc))
                        code = _run(["results", "compare", str(path), "--history", str(db)], root)
                        c = counts.setdefault(kind, [0, 0])
                        c[0] += code == 1
                        c[1] += 1
                print(
                    f"CLI | {name} | {label} | unchanged singles fail {fmt(counts['aa'])} | "
                    f"change singles caught {fmt(counts['change'])}",
                    flush=True,
                )


def _run(args: list[str], cwd: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "infx", *args], cwd=cwd, capture_output=True, text=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"infx {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--random", type=int, default=12, help="draws per random scenario")
    parser.add_argument("--cli", action="store_true", help="also judge through the real CLI")
    parser.add_argument("--only", default="", help="scenarios whose name holds this")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        found = {name: tables(name, Path(tmp) / name) for name in SETS}
    print(
        "set | scenario | histories | unchanged 1 / 2 / 3 fail | binomial p vs 5 % | "
        "change 1 / 2 / 3 caught | change 1 / 2 / 3 missed (within noise or improved)"
    )
    for name in SETS:
        table: dict[str, dict[str, list[int]]] = {}
        seen: dict[str, int] = {}
        for scenario, history, keep in histories(name, found, rng, args.random):
            if args.only not in scenario:
                continue
            if table and scenario not in table:
                show(name, table, seen)
            tally(found[name], history, keep, table.setdefault(scenario, {}))
            seen[scenario] = seen.get(scenario, 0) + 1
        for scenario, pr, history in own_runs(name, list(found[name]["main"].values())):
            if args.only not in scenario:
                continue
            if table and scenario not in table:
                show(name, table, seen)
            c = table.setdefault(scenario, {}).setdefault("aa1", [0, 0])
            c[0] += compare(pr["rows"], history, history_runs=WINDOW).failing
            c[1] += 1
            seen[scenario] = seen.get(scenario, 0) + 1
        show(name, table, seen)
        if args.only in "in time, newest":
            in_time(name, found, table)
            seen.update((s, 0) for s in table)
            show(name, table, seen)
    if args.cli:
        cli_path(found)
    return 0


def show(name: str, table: dict[str, dict[str, list[int]]], seen: dict[str, int]) -> None:
    """Print the scenarios tallied so far, and forget them."""
    for scenario, counts in table.items():
        fails = [counts.get(f"aa{s}") for s in (1, 2, 3)]
        k = sum(c[0] for c in fails if c)
        total = sum(c[1] for c in fails if c)
        p = upper_p(k, total)
        print(
            f"{name} | {scenario} | {seen[scenario] or 'one per group'} | "
            f"{' / '.join(fmt(c) for c in fails)} | {p:.3g} | "
            f"{' / '.join(fmt(counts.get(f'change{s}')) for s in (1, 2, 3))} | "
            f"{' / '.join(fmt(counts.get(f'miss{s}')) for s in (1, 2, 3))}",
            flush=True,
        )
    table.clear()
    seen.clear()


if __name__ == "__main__":
    sys.exit(main())

"""GPU-hours a sweep holds against what its servers use, what a targeted rerun spends
against a full rerun, and how close the estimate gets to recorded durations as a history of
sweeps accumulates.

0. Held against used, on InferenceX's every-config plan (`../shared/inferencex/plans/
   all-keys.plan.json.gz`, made by InferenceX's own planner) with its runners.yaml: a job
   holds whole nodes (gpus-per-node from runners.yaml, else 8), a multi-node job every
   node of every worker (or the nodes its recipe asks for); per pool, then in all.

1. Targeted rerun against full rerun, on the real InferenceX configs (`../shared`; a
   synthetic 300-config file without it): the plan of an entry selecting every config,
   then failure scenarios drawn with a fixed seed. The rows to rerun come from infx's own
   code, `missing` over result rows for every point that succeeded, then `select` and
   `rerun_plan`; GPU-hours from `infx.matrix.cost.estimate`.
2. Estimate against recorded durations on a replayed history: 40 sweeps over the same
   plan (most touch a few configs, every tenth is a full sweep) whose jobs take a
   synthetic "true" time per identity (its own factor off the assumption, plus run noise
   and stragglers). Before each sweep the plan is estimated from the assumptions alone and
   from the job timings recorded so far (`Timings`, the file the workflow carries); after
   it, the sweep's durations are recorded. The history is synthetic: no public record of
   InferenceX job timings exists here; the model is stated in `true_minutes`.

Run: python benchmarks/bench_gpu_hours.py
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from infx.matrix.cost import estimate, job_key, node_gpus
from infx.matrix.expand import hardware_table, is_agentic, is_multinode, row_concs
from infx.matrix.load import load_yaml, parse_masters
from infx.matrix.options import PlanOptions
from infx.matrix.pipeline import SweepInputs, plan_sweep
from infx.matrix.plan import Revision, canary
from infx.matrix.rows import MatrixPlan, MatrixRow
from infx.matrix.timings import Timings
from infx.rerun.rules import jobs_of, missing, rerun_plan, row_id, select, valid_points
from infx.results.ingest.process import eval_concurrency, expected_outputs, identity, recipe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plan import synthetic  # the same synthetic configs as the plan benchmark

SHARED = Path(__file__).resolve().parents[2] / "shared" / "inferencex"
SEED = 19
ENTRY = b'\n- config-keys:\n    - "*"\n  description:\n    - "every config"\n  pr-link: XXX\n'
HISTORY = b'- config-keys:\n    - seed\n  description:\n    - "seed"\n  pr-link: https://github.com/a/b/pull/1\n'


def full_plan() -> tuple[MatrixPlan, str]:
    if SHARED.is_dir():
        files = {p.name: p.read_bytes() for p in (SHARED / "configs").glob("*-master.yaml")}
        runners = load_yaml((SHARED / "configs" / "runners.yaml").read_bytes())
        hardware = hardware_table(runners.get("hardware") or {})
        where = "the InferenceX configs (../shared/inferencex)"
    else:
        files, hardware = {"amd-master.yaml": synthetic(300)}, {}
        where = "a synthetic 300-config master file (../shared absent)"
    masters = parse_masters(files)
    first = masters.keys()[0]
    history = HISTORY.replace(b"seed", first.encode())
    inputs = SweepInputs(history, history + ENTRY, Revision(masters, hardware), refs=("a", "b"))
    return plan_sweep(inputs, PlanOptions()).plan.as_json(), where


def result_rows(row: MatrixRow, is_eval: bool) -> list[dict[str, Any]]:
    """What a successful job leaves, as far as deciding what to rerun goes."""
    plain = dict(row)
    if is_eval:
        return [{"kind": "accuracy", "identity": identity(plain, eval_concurrency(plain)),
                 "recipe": recipe(plain)}]  # fmt: skip
    return [
        {"kind": "throughput", "identity": identity(plain, conc), "recipe": recipe(plain)}
        for conc, _ in expected_outputs(plain)
    ]


def hours(jobs: list[tuple[MatrixRow, bool]]) -> float:
    return sum(cost.gpu_hours for cost in estimate(jobs))


# --- 0. held against used ---------------------------------------------------------------------


def held_against_used() -> None:
    import gzip
    import json

    golden = SHARED / "plans" / "all-keys.plan.json.gz"
    if not golden.is_file():
        print("0. Held against used: skipped (../shared/inferencex/plans absent)\n")
        return
    plan = json.loads(gzip.decompress(golden.read_bytes()))
    runners = load_yaml((SHARED / "configs" / "runners.yaml").read_bytes())
    sizes = node_gpus(runners.get("labels") or {}, runners.get("hardware") or {})
    costs = estimate(jobs_of(plan), node_gpus=sizes)
    used = math.fsum(c.gpu_hours for c in costs)
    held = math.fsum(c.held_hours for c in costs)
    print("0. GPU-hours held against used, InferenceX's every-config plan (plans/all-keys)")
    print(f"   {len(costs)} jobs; assumptions: 15 min a point, an agentic job its duration\n")
    print("| pool | jobs | GPUs per node | GPU-hours used | GPU-hours held | held / used |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    pools: dict[str, list[Any]] = {}
    for cost in costs:
        pools.setdefault(str(cost.row["runner"]), []).append(cost)
    for label, group in sorted(pools.items(), key=lambda item: -sum(c.held_hours for c in item[1])):
        u, h = sum(c.gpu_hours for c in group), sum(c.held_hours for c in group)
        size = f"{sizes[label]}" if label in sizes else "8 (assumed)"
        print(f"| {label} | {len(group)} | {size} | {u:,.1f} | {h:,.1f} | {h / u:.2f} |")
    single = [c for c in costs if not is_multinode(c.row)]
    multi = [c for c in costs if is_multinode(c.row)]
    for name, group in (("single-node", single), ("multi-node", multi)):
        u, h = sum(c.gpu_hours for c in group), sum(c.held_hours for c in group)
        print(f"| **{name}** | {len(group)} | | {u:,.1f} | {h:,.1f} | {h / u:.2f} |")
    print(f"| **total** | {len(costs)} | | {used:,.1f} | {held:,.1f} | {held / used:.2f} |\n")


# --- 1. targeted against full ---------------------------------------------------------------


def scenarios(
    plan_jobs: list[tuple[MatrixRow, bool]], rng: random.Random
) -> list[tuple[str, set[int], bool]]:
    """(name, failed job positions, recipe changed)."""
    count = len(plan_jobs)
    three = set(rng.sample(range(count), 3))
    share = set(rng.sample(range(count), max(1, round(count * 0.03))))
    # A node of the biggest pool lost halfway: the later half of its jobs (round-robin).
    pools: dict[str, list[int]] = {}
    for i, (row, _) in enumerate(plan_jobs):
        pools.setdefault(row["runner"], []).append(i)
    label, members = max(pools.items(), key=lambda item: len(item[1]))
    nodes = 8
    lost = {i for n, i in enumerate(members) if n % nodes == 3 and n > len(members) // 2}
    # fail-fast: one failure in a 256-row chunk cancels the rows after it.
    start = rng.randrange(0, max(1, count - 256))
    chunk = set(range(start + 100, min(count, start + 256)))
    return [
        ("3 jobs lost to infra", three, False),
        ("3% of jobs failed", share, False),
        (f"one {label} node lost halfway", lost, False),
        ("fail-fast cancelled 156 rows of a chunk", chunk, False),
        ("3 failed, recipe fixed since (canary first)", three, True),
    ]


def targeted_against_full() -> None:
    plan, where = full_plan()
    plan_jobs = jobs_of(plan)
    rng = random.Random(SEED)
    full = hours(plan_jobs)
    print(f"1. Targeted rerun against full rerun, on {where}")
    print(f"   plan of one entry selecting every config: {len(plan_jobs)} jobs, {full:,.0f} "
          "GPU-hours (assumptions: 15 min a point, an agentic job its duration)\n")  # fmt: skip
    print("| scenario | jobs rerun | GPU-hours targeted | GPU-hours full | saved | decide (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    first, _ = canary(plan)
    for name, failed, changed in scenarios(plan_jobs, rng):
        docs = [{"rows": [r for i, (row, ev) in enumerate(plan_jobs) if i not in failed
                          for r in result_rows(row, ev)]}]  # fmt: skip
        began = time.perf_counter()
        missing_at = missing(plan_jobs, valid_points(docs, None))
        chosen = select(plan_jobs, missing_at, plan, [], "missing")
        todo = rerun_plan(plan, chosen, recipe_changed=changed, source_canary=True)
        took = (time.perf_counter() - began) * 1000
        assert sorted(missing_at) == sorted(failed), name
        if changed and first is not None:
            assert row_id(todo.jobs[0][0]) == row_id(first)
        part = hours(todo.jobs)
        print(f"| {name} | {len(todo.jobs)} | {part:,.1f} | {full:,.0f} | "
              f"{100 * (1 - part / full):.2f}% | {took:.0f} |")  # fmt: skip
    print()


# --- 2. estimate against recorded durations ---------------------------------------------------


def true_minutes(row: MatrixRow, factor: float) -> float:
    """The synthetic truth: a server start, then client time that grows with the sequence
    lengths and falls with concurrency; agentic jobs their duration plus start; multi-node
    jobs a longer start. `factor` is the identity's own deviation (hardware, model size)."""
    if is_agentic(row) and "duration" in row:
        return (row["duration"] / 60 + 8) * factor
    start = 25 if is_multinode(row) else 6
    client = 0.0
    for conc in row_concs(row):
        lengths = (row.get("isl", 1024) + row.get("osl", 1024)) / 2048
        client += 4 + 6 * lengths * (1 + 16 / conc) ** 0.5
    if row.get("run-eval"):
        client = 12
    return (start + client) * factor


def replayed_history(sweeps: int = 40) -> None:
    plan, where = full_plan()
    plan_jobs = jobs_of(plan)
    rng = random.Random(SEED)
    factors = {job_key(row): math.exp(rng.gauss(0, 0.35)) for row, _ in plan_jobs}
    curves: dict[str, list[int]] = {}
    for i, (row, _) in enumerate(plan_jobs):
        curves.setdefault(f"{row.get('model-prefix')}|{row.get('framework')}|{row['runner']}",
                          []).append(i)  # fmt: skip
    names = sorted(curves)
    timings = Timings()
    print(f"2. Estimate against recorded durations, {sweeps} replayed sweeps over {where}")
    print("   (synthetic truth per identity; run noise 10%, 3% stragglers at 2x)\n")
    print(
        "| sweep | jobs | recorded | true GPU-h | assumed estimate | error | recorded estimate | error |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    errors_assumed, errors_recorded = [], []
    for sweep in range(1, sweeps + 1):
        if sweep % 10 == 0:
            picked = list(range(len(plan_jobs)))
        else:
            chosen = rng.sample(names, max(1, len(names) // 20))
            picked = sorted(i for name in chosen for i in curves[name])
        jobs = [plan_jobs[i] for i in picked]
        assumed = estimate(jobs)
        recorded = estimate(jobs, timings.durations())
        truth, samples = 0.0, []
        for (row, _), cost in zip(jobs, assumed, strict=True):
            minutes = true_minutes(row, factors[job_key(row)]) * math.exp(rng.gauss(0, 0.10))
            if rng.random() < 0.03:
                minutes *= 2
            truth += minutes / 60 * cost.gpus
            samples.append((job_key(row), minutes * 60, 1000 + sweep))
        guess_a = sum(c.gpu_hours for c in assumed)
        guess_r = sum(c.gpu_hours for c in recorded)
        err_a = 100 * (guess_a - truth) / truth
        err_r = 100 * (guess_r - truth) / truth
        share = 100 * sum(1 for c in recorded if c.recorded) / len(recorded)
        if sweep > 10:
            errors_assumed.append(abs(err_a))
            errors_recorded.append(abs(err_r))
        if sweep <= 3 or sweep % 5 == 0:
            print(f"| {sweep} | {len(jobs)} | {share:.0f}% | {truth:,.1f} | {guess_a:,.1f} | "
                  f"{err_a:+.1f}% | {guess_r:,.1f} | {err_r:+.1f}% |")  # fmt: skip
        timings = timings.add(samples)
    print(
        f"\nsweeps 11-{sweeps}: mean absolute error of the total, assumptions only "
        f"{statistics.mean(errors_assumed):.1f}%, with recorded durations "
        f"{statistics.mean(errors_recorded):.1f}%"
    )


def main() -> int:
    held_against_used()
    targeted_against_full()
    replayed_history()
    return 0


if __name__ == "__main__":
    sys.exit(main())

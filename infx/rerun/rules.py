"""Rerun only what failed: the rows of a sweep without a valid result, the plan that runs
them again (the canary first where due), and the node each infra retry goes to.

Pure. A rerun is a new run of the sweep workflow (workflow_dispatch, input `rerun-of`)
that carries its source's plan: its planning job writes the rows to run into its own
`sweep.json`, the whole plan the lineage measures into `source-plan.json`, and a
`rerun.json` record; its collect job merges the source's results under its own. GitHub's
"re-run failed jobs" cannot do this: it keeps the run's commit (a fixed recipe is not
picked up), cannot send a job to another node, and does not rerun a job that passed
without leaving a valid result.

A row has a valid result when every point it measures (`expected_outputs`) is in a
results file of the lineage with the row's own recipe (image, exp-name, fingerprint, ...)
and, for an eval, every score meets its accuracy floor.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infx.errors import UsageError
from infx.matrix.cost import GPUS_PER_NODE, held_nodes
from infx.matrix.plan import canary
from infx.matrix.rows import (
    EVAL_BUCKETS,
    MatrixPlan,
    MatrixRow,
    PlanDocument,
    empty_plan,
    jobs_of,
    row_id,
)
from infx.matrix.timings import JobSlot, Timings, job_slot, row_at
from infx.numbers import decimal
from infx.rerun.triage import ACCURACY, CANCELLED, Failure, classify, is_infra
from infx.results.table.rows import Table
from infx.results.verdict.floors import Floors, checks
from infx.sweep.record import MAX_DEPTH, MAX_REPEATS, RECORD_FILE, SCOPES, RunRecord
from infx.sweep.record import PINS_FILE as PINS_FILE
from infx.sweep.record import PLAN_ARTIFACT as PLAN_ARTIFACT

if TYPE_CHECKING:
    from infx.github.client import Job, Run

# The files of a sweep-plan artifact (with rerun.json and runs-on.json, infx.sweep.record).
PLAN_FILE = "sweep.json"
SOURCE_PLAN_FILE = "source-plan.json"
TIMINGS_FILE = "timings.json"
ESTIMATE_FILE = "estimate.json"
JOBS_ARTIFACT = "sweep-jobs"
TRIAGE_FILE = "triage.json"
# Log tails read per run, the failed jobs' first.
MAX_LOGS = 30
__all__ = ["jobs_of", "row_id"]  # where a rerun's callers have always found them


@dataclass
class PlanFiles:
    """A run's sweep-plan artifact: the plan it dispatched and what a rerun carries."""

    plan: PlanDocument
    record: RunRecord | None
    source_plan: MatrixPlan | None = None
    timings: Timings = field(default_factory=Timings)
    # config-keys.json: each row's master config, carried to the rerun's jobs' results.
    origins: dict[str, str] = field(default_factory=dict)

    @property
    def whole(self) -> MatrixPlan:
        """The plan the lineage measures: the original sweep's, whole."""
        return self.source_plan if self.source_plan is not None else whole_plan(self.plan)


# --- plans as lists of jobs ----------------------------------------------------------------


def whole_plan(document: PlanDocument) -> MatrixPlan:
    """A plan with its canary (if split off) back at the head of its bucket."""
    if "remaining" not in document:
        return copy.copy(document)
    plan = copy.deepcopy(document["remaining"])
    for row in document["canary"]:
        name = "1k1k" if (row.get("isl"), row.get("osl")) == (1024, 1024) else "8k1k"
        plan["single_node"].setdefault(name, []).insert(0, row)
    return plan


def subset(plan: MatrixPlan, keep: Sequence[str]) -> MatrixPlan:
    """The plan with only the rows named in `keep` (row ids, a multiset), same layout."""
    wanted: dict[str, int] = {}
    for rid in keep:
        wanted[rid] = wanted.get(rid, 0) + 1

    def kept(rows: list[MatrixRow]) -> list[MatrixRow]:
        found = []
        for row in rows:
            rid = row_id(row)
            if wanted.get(rid, 0) > 0:
                wanted[rid] -= 1
                found.append(row)
        return found

    out = empty_plan()
    for shape, into in (
        (plan["single_node"], out["single_node"]),
        (plan["multi_node"], out["multi_node"]),
    ):
        for name, rows in shape.items():
            if chosen := kept(rows):
                into[name] = chosen
    for bucket in EVAL_BUCKETS:
        out[bucket] = kept(plan[bucket])
    out["changelog_metadata"] = plan["changelog_metadata"]
    return out


# --- valid results ----------------------------------------------------------------------------


def _point(kind: str, identity: Mapping[str, Any], recipe: Any) -> str:
    """A point measured with one recipe (two configs may measure the same point with
    different images; each needs its own result)."""
    ident = {k: v for k, v in identity.items() if k != "hardware"}
    return json.dumps([kind, ident, recipe], sort_keys=True)


def expected(row: MatrixRow, is_eval: bool) -> list[str]:
    """The points a row's job measures, with its recipe."""
    from infx.results.ingest.process import eval_concurrency, expected_outputs, identity, recipe

    how = recipe(row)
    if is_eval or row.get("run-eval"):
        return [_point("accuracy", identity(row, eval_concurrency(row)), how)]
    outputs = expected_outputs(row)
    return [_point("throughput", identity(row, conc), how) for conc, _ in outputs]


def valid_points(docs: Iterable[Table], floors: Floors | None) -> set[str]:
    """Every point, with its recipe, that a result row counts for: an accuracy row below a
    floor does not."""
    found: set[str] = set()
    for doc in docs:
        for result in doc.get("rows", []):
            below = floors is not None and any(
                not check.passed for check in checks([result], floors)
            )
            if result.get("kind") == "accuracy" and below:
                continue
            found.add(_point(result["kind"], result["identity"], result.get("recipe")))
    return found


def has_result(row: MatrixRow, is_eval: bool, points: set[str]) -> bool:
    return all(point in points for point in expected(row, is_eval))


def missing(
    plan_jobs: Sequence[tuple[MatrixRow, bool]],
    points: set[str],
    source_outcomes: Sequence[JobOutcome] = (),
) -> list[int]:
    """Positions of the jobs without a valid result. A row whose job failed its floor check
    in the source run has none whatever floors the caller knows: its score is in the table."""
    below = {row_id(o.row) for o in source_outcomes if o.kind == ACCURACY}
    return [
        i
        for i, (row, is_eval) in enumerate(plan_jobs)
        if not has_result(row, is_eval, points) or row_id(row) in below
    ]


# --- what the source run's jobs say ---------------------------------------------------------


@dataclass(frozen=True)
class JobOutcome:
    """One benchmark job of a run, mapped to the row it ran."""

    slot: JobSlot
    row: MatrixRow
    conclusion: str | None
    kind: str | None  # triage class; None: it succeeded
    node: str
    attempt: int = 1


def outcomes(
    jobs: Iterable[Job], plan: PlanDocument, logs: Mapping[int, str | None]
) -> list[JobOutcome]:
    """The benchmark jobs of a run with their triage class. `logs` holds the log tails read
    (job id -> text, None: GitHub kept none); a failed job missing from it was not read."""
    found = []
    for job in jobs:
        slot = job_slot(job.name)
        row = row_at(plan, slot) if slot else None
        if slot is None or row is None:
            continue
        kind = None
        if job.conclusion != "success":
            kind = classify(
                Failure(job.conclusion, job.failed_step, logs.get(job.id), job.id in logs)
            )
        node = job.runner_name or ""
        found.append(JobOutcome(slot, row, job.conclusion, kind, node, job.attempt))
    return found


def failures(source_outcomes: Iterable[JobOutcome]) -> dict[str, str]:
    """Row id -> why its job did not succeed, and where (`runner-lost on mi355x-amds_03`)."""
    return {row_id(o.row): f"{o.kind} on {o.node or '?'}" for o in source_outcomes if o.kind}


def select(
    plan_jobs: Sequence[tuple[MatrixRow, bool]],
    missing_at: Sequence[int],
    ran: PlanDocument,
    source_outcomes: Sequence[JobOutcome],
    scope: str,
) -> list[int]:
    """Positions of the jobs to run again. `missing` scope: every job without a valid
    result. `infra` scope: those whose job failed for an infra reason; and, when every
    failure of the source run was infra, also its rows that never ran or were cancelled
    (fail-fast, a canary lost with its runner). `ran` is the source run's own plan."""
    if scope == "missing":
        return list(missing_at)
    failed = [o for o in source_outcomes if o.kind not in (None, CANCELLED)]
    infra = {row_id(o.row) for o in failed if is_infra(o.kind or "")}
    collateral: set[str] = set()
    if failed and len(infra) == len({row_id(o.row) for o in failed}):
        finished = {row_id(o.row) for o in source_outcomes if o.kind != CANCELLED}
        planned = {row_id(row) for row, _ in jobs_of(ran)}
        collateral = planned - finished
    chosen = infra | collateral
    return [i for i in missing_at if row_id(plan_jobs[i][0]) in chosen]


def pin_nodes(
    rows: Sequence[MatrixRow],
    source_outcomes: Sequence[JobOutcome],
    pools: Mapping[str, Sequence[str]],
) -> tuple[dict[str, str], list[str]]:
    """MatrixRow id -> the node an infra failure is retried on, spread round-robin over the nodes
    of the row's pool that had no infra failure in the source run; notes on rows left to
    the whole pool."""
    bad = {o.node for o in source_outcomes if o.kind and is_infra(o.kind) and o.node}
    failed_on = {row_id(o.row): o.node for o in source_outcomes if o.kind and is_infra(o.kind)}
    pins: dict[str, str] = {}
    notes: list[str] = []
    turn: dict[str, int] = {}
    for row in rows:
        rid = row_id(row)
        if rid not in failed_on or rid in pins:
            continue
        label = str(row["runner"])
        allowed = [node for node in pools.get(label, []) if node not in bad]
        if not allowed:
            notes.append(f"{row.get('exp-name')}: no other node of {label} is known to be healthy")
            continue
        pins[rid] = allowed[turn.get(label, 0) % len(allowed)]
        turn[label] = turn.get(label, 0) + 1
    return pins, notes


@dataclass
class RerunPlan:
    """What a rerun runs: its plan (canary split when due), pins, and why."""

    plan: PlanDocument
    jobs: list[tuple[MatrixRow, bool]]
    canary: MatrixRow | None
    pins: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def rerun_plan(
    whole: MatrixPlan,
    chosen: Sequence[int],
    *,
    recipe_changed: bool,
    source_canary: bool,
) -> RerunPlan:
    """The plan of a rerun: the chosen jobs of the whole plan, with the plan's canary run
    first when the recipe changed since the source run or when the canary itself is among
    the jobs of a sweep that had one."""
    plan_jobs = jobs_of(whole)
    ids = [row_id(plan_jobs[i][0]) for i in chosen]
    first, _ = canary(whole)
    due = first is not None and (recipe_changed or (source_canary and row_id(first) in ids))
    if not due or first is None:
        kept = subset(whole, ids)
        return RerunPlan(kept, jobs_of(kept), None)
    rest = list(ids)
    if row_id(first) in rest:
        rest.remove(row_id(first))
    kept = subset(whole, rest)
    split: PlanDocument = {"canary": [first], "remaining": kept}
    return RerunPlan(split, jobs_of(split), first)


# --- may this run be rerun? ---------------------------------------------------------------------


def refusal(
    run: Run,
    workflow: str,
    record: RunRecord | None,
    branch_runs: Sequence[Run],
    newer_sweeps: Sequence[int],
    *,
    scope: str,
    automatic: bool = False,
    repo: str | None = None,
) -> str | None:
    """Why `run` may not be rerun now (None: it may). `branch_runs` are the workflow's recent
    runs on the run's branch; `newer_sweeps` the runs that uploaded a sweep plan there since.
    `repo`: this repository; a run of another's commits (a fork's pull request runs the
    fork's own workflow, which can upload any plan) is never rerun."""
    if not run.path.endswith(f".github/workflows/{workflow}"):
        return f"run {run.id} is not a run of {workflow} ({run.path})"
    if repo is not None and run.head_repo != repo:
        return (
            f"run {run.id} ran commits of {run.head_repo or 'an unknown repository'}, "
            f"not {repo}: a fork's run is never rerun"
        )
    if run.status != "completed":
        return f"run {run.id} is {run.status}; wait until it completes"
    if record is None:
        return f"run {run.id} has no {RECORD_FILE} in its {PLAN_ARTIFACT} artifact"
    if scope not in SCOPES:
        return f"scope must be one of {', '.join(SCOPES)}"
    if record.depth >= MAX_DEPTH:
        return f"run {run.id} is already rerun number {record.depth} of run {record.root}"
    if scope == "repeat" and record.repeats >= MAX_REPEATS:
        return f"run {run.id} is already one of {record.repeats} repeats of run {record.root}"
    if automatic:
        if run.conclusion != "failure":
            return f"run {run.id} concluded {run.conclusion}; only failed sweeps are retried"
        if record.scope == "infra":
            return f"run {run.id} is itself an automatic retry; infra failures are retried once"
    running = [r for r in branch_runs if r.status != "completed" and r.id != run.id]
    if running:
        return (
            f"run {running[0].id} of {workflow} is {running[0].status} on this branch; wait for it"
        )
    newer = sorted(n for n in newer_sweeps if n != run.id)
    if newer:
        return f"run {newer[-1]} is a newer sweep of this branch; rerun that one instead"
    return None


# Run and PR numbers have at most 20 digits (GitHub's ids are far below it).
RUN_NUMBER_END = 10**20


def run_number(value: str, what: str) -> int:
    """A run (or PR) number given as text: 1 to 20 digits, no leading zero (it goes into
    workflow inputs and API paths as given); anything else is a usage error naming `what`."""
    number = decimal(value or "", below=RUN_NUMBER_END)
    if number is None or value.startswith("0"):
        raise UsageError(f"{what} must be a run id (digits), not {value!r}")
    return number


# Runner labels of GitHub's hosted machines, and the runner group GitHub names for them:
# their jobs hold no GPU.
_HOSTED = ("ubuntu-", "windows-", "macos-")
_HOSTED_GROUP = "GitHub Actions"


def _hosted(job: Job) -> bool:
    """A job GitHub ran on its own machines: every label one of theirs and, where GitHub
    names the runner's group, GitHub's own group. A self-hosted runner may carry a label
    such as `ubuntu-22.04` too, and a PR's workflow chooses the labels; the group is the
    runner's, set by the repository's admins."""
    return all(label.startswith(_HOSTED) for label in job.labels) and (
        job.runner_group is None or job.runner_group == _HOSTED_GROUP
    )


def plan_gpus(
    rows: Iterable[tuple[MatrixRow, bool]],
    gpus: Mapping[str, int],
    pools: Mapping[str, Sequence[str]],
) -> dict[str, int]:
    """GPUs the largest job of a lineage's plan holds (every node it takes: `held_nodes`)
    on each runner label, and on each node of that label's pool (a job pinned to a node
    runs on the node's name)."""
    held: dict[str, int] = {}
    for row, _ in rows:
        label = str(row.get("runner"))
        per_node = int(gpus.get(label, GPUS_PER_NODE))
        size = held_nodes(row, per_node) * per_node
        for name in (label, *pools.get(label, ())):
            held[name] = max(held.get(name, 0), size)
    return held


def gpu_job_hours(
    jobs: Sequence[Job], gpus: Mapping[str, int], held: Mapping[str, int] | None = None
) -> float:
    """GPU-hours a run's jobs held, as GitHub recorded them: every job that ran on a runner
    that is not one of GitHub's hosted machines, whatever the workflow named it, for the
    time it ran. GitHub records one runner for a multi-node job (its launcher; the cluster
    scheduler holds the other nodes), and a job's name is the word of the code that ran
    it, so a job counts the GPUs of the largest job of the lineage's plan on its runner
    label (`held`, `plan_gpus`), or of the plan's largest job on a label the plan does not
    use; never less than a node of its label (GPUS_PER_NODE when runners.yaml sizes none)."""
    largest = max((held or {}).values(), default=0)
    total = []
    for job in jobs:
        seconds = job.seconds
        if not seconds or _hosted(job):
            continue
        sizes = [gpus[label] for label in job.labels if label in gpus]
        planned = [held[label] for label in job.labels if held and label in held]
        size = max(max(sizes) if sizes else GPUS_PER_NODE, max(planned) if planned else largest)
        total.append(seconds / 3600 * size)
    return math.fsum(total)


def lineage_before(record: RunRecord, trusted: float | None) -> float:
    """The GPU-hours a rerun's lineage was priced at before it. Main's record is its own
    code's word. A PR's record was written by a run of the PR's own code, which could
    lower it: GitHub's record of the lineage's jobs (`trusted`) is the floor. A record
    written before infx kept the figure adds nothing (the rerun is priced on its own)."""
    recorded = record.spent if record.spent is not None else 0.0
    return max(recorded, trusted or 0.0)

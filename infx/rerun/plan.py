"""`infx sweep rerun-plan`, the rerun run's planning job, as a use case: the source run's
rows without a valid result (the canary first when a file its jobs read changed since),
pinned to other nodes after infra failures, and the files, job outputs and summary of
this run. Pure: `infx.rerun.reads.rerun_plan_facts` reads the facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.errors import ConfigError
from infx.markdown import Md, table, text
from infx.matrix import origins
from infx.matrix.cost import estimate, estimate_document, verdict, wall_minutes
from infx.matrix.manifest import SweepOptions, differences, lineage, summarize
from infx.rerun.paired import (
    PAIRS_FILE,
    Pair,
    base_rows,
    paired_pins,
    pairs,
    source_nodes,
    with_partners,
)
from infx.rerun.paired import document as paired_document
from infx.rerun.repeat import repeat_positions
from infx.rerun.rules import (
    ESTIMATE_FILE,
    PLAN_FILE,
    SOURCE_PLAN_FILE,
    TIMINGS_FILE,
    JobOutcome,
    PlanFiles,
    RerunPlan,
    failures,
    gpu_job_hours,
    jobs_of,
    lineage_before,
    missing,
    outcomes,
    pin_nodes,
    refusal,
    row_id,
    run_number,
    select,
    valid_points,
)
from infx.rerun.rules import rerun_plan as plan_rerun
from infx.results.table.rows import Table
from infx.sweep.outcome import Outcome, json_bytes
from infx.sweep.plan import budget_outputs
from infx.sweep.record import PINS_FILE, RECORD_FILE, RunRecord

if TYPE_CHECKING:
    from infx.github.client import Job, Run
    from infx.matrix.cost import BudgetVerdict
    from infx.matrix.rows import MatrixRow
    from infx.matrix.timings import Timings
    from infx.results.verdict.floors import Floors

# Changed files a summary names before it counts the rest.
_SHOWN_CHANGES = 3
# Runs of the branch, newest first, whose jobs are read to find what a PR's lineage spent
# (its reruns, at most MAX_DEPTH, and the label events' runs between them that ran nothing).
LINEAGE_RUNS = 25


@dataclass(frozen=True)
class RerunPlanRequest:
    """`infx sweep rerun-plan`'s options, by their click names."""

    source_run: str
    source_dir: Path
    manifest_file: Path
    output_dir: Path
    scope: str
    pr_text: str
    run_id: str
    ref_name: str
    workflow: str
    repo: str | None
    durations: Path | None = None  # main's job timings (`sweep timings`)

    def __post_init__(self) -> None:
        run_number(self.source_run, "--source-run")
        run_number(self.run_id, "--run-id")
        if self.pr_text:
            run_number(self.pr_text, "--pr")

    @property
    def source_id(self) -> int:
        return int(self.source_run)

    @property
    def this_run(self) -> int:
        return int(self.run_id)

    @property
    def pr(self) -> int | None:
        return int(self.pr_text) if self.pr_text else None


@dataclass(frozen=True)
class RerunPlanFacts:
    """What the planning job reads, in order; `refused` says why it stopped reading."""

    files: PlanFiles  # the source run's sweep-plan
    run: Run
    branch: list[Run]  # the workflow's runs on the source's branch, this one aside
    newer: list[int]
    jobs: list[Job]
    logs: dict[int, str | None]
    refused: str = ""
    manifest: dict[str, Any] = field(default_factory=dict)  # the source's
    recipe_changes: list[str] = field(default_factory=list)
    floors: Floors | None = None
    docs: list[Table] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pools: dict[str, list[str]] = field(default_factory=dict)  # runner label -> nodes
    other_node: bool = True  # settings: rerun infra failures on another node
    head_sha: str = ""
    budgets: Mapping[str, float] = field(default_factory=dict)
    files_now: dict[str, str | None] = field(default_factory=dict)  # manifest digests at HEAD
    node_gpus: dict[str, int] = field(default_factory=dict)  # runner label -> GPUs per node
    recorded: Timings | None = None  # what the source run recorded (its sweep-jobs)
    main_timings: Timings | None = None  # main's own sweeps' (`sweep timings`, --durations)
    repeat: set[str] = field(default_factory=set)  # scope repeat: the unconfirmed points
    # scope repeat: main's plan of the repeated configs (the base's master configs), each
    # repeated row's partner; empty: the repeat measures this PR alone
    base_jobs: list[tuple[MatrixRow, bool]] = field(default_factory=list)
    # A PR's lineage: the GPU-hours GitHub's record of its runs' jobs says they held
    # (`lineage_runs`, `gpu_job_hours`); None: not read (main's lineage: its record)
    lineage_hours: float | None = None

    @property
    def timings(self) -> Timings:
        """The timings this rerun starts from. A rerun of main's sweep: what its source
        recorded (its jobs' durations on top of what it started from), else what it started
        from; carried on, a lineage keeps every run's durations. A rerun of a PR's sweep:
        main's own (`--durations`), never its source's, whose collect job ran the PR's
        workflow and could claim every job took a minute; without them, none (every job
        is estimated from the assumptions)."""
        from infx.matrix.timings import Timings

        if self.files.record is not None and self.files.record.pr is not None:
            return self.main_timings or Timings()
        return self.recorded if self.recorded is not None else self.files.timings


def _what(pr: int | None) -> str:
    return f"PR #{pr}" if pr is not None else "the main branch"


def source_refusal(request: RerunPlanRequest, facts: RerunPlanFacts, repo: str) -> str | None:
    """Why the source run may not be rerun by this run (None: it may)."""
    run, record = facts.run, facts.files.record
    why = refusal(
        run, request.workflow, record, facts.branch, facts.newer,
        scope=request.scope, automatic=request.scope == "infra", repo=repo,
    )  # fmt: skip
    if why is None and record is not None and record.pr != request.pr:
        why = f"run {request.source_id} swept {_what(record.pr)}, not {_what(request.pr)}"
    if why is None and run.head_branch != request.ref_name:
        why = (
            f"run {request.source_id} ran on {run.head_branch}; dispatch its rerun there, "
            f"not on {request.ref_name}"
        )
    return why


def manifest_options(manifest: Mapping[str, Any]) -> SweepOptions:
    """The options a sweep ran with, as its manifest recorded them."""
    sweep, options = manifest["sweep"], manifest["measured"]["options"]
    return SweepOptions(
        event=sweep["event"],
        label=sweep["label"],
        trim_conc=options["trim-conc"],
        all_evals=options["all-evals"],
        evals_only=options["evals-only"],
        agentx_fast=options["agentx-fast"],
        reusable=sweep["reusable"],
    )


def plan_changed(
    measured: Mapping[str, Any], now: Mapping[str, Any], record: RunRecord
) -> str | None:
    """Why the PR no longer plans the sweep its source run measured (None: it still does):
    the manifests differ in more than files (a changed recipe is what a rerun after a fix
    is for; it runs the canary first)."""
    found = [d for d in differences(measured, now) if not d.startswith("file ")]
    if not found:
        return None
    return (
        f"PR #{record.pr} now plans another sweep than run {record.run_id} measured "
        f"({summarize(found)}); run a new sweep instead"
    )


def lineage_runs(source: Run, branch: Sequence[Run]) -> list[Run]:
    """The runs that may belong to the source's lineage, newest first: the source and the
    workflow's runs on its branch before it (`LINEAGE_RUNS` at most)."""
    earlier = [r for r in branch if (r.created_at, r.id) < (source.created_at, source.id)]
    earlier.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    return [source, *earlier][:LINEAGE_RUNS]


def lineage_root(run: Run, jobs: Sequence[Job], gpus: Mapping[str, int]) -> bool:
    """Whether `run` is where a lineage starts: a sweep (not a dispatched rerun) that held GPUs."""
    return run.event != "workflow_dispatch" and gpu_job_hours(jobs, gpus) > 0


def rerun_plan_outcome(request: RerunPlanRequest, facts: RerunPlanFacts) -> Outcome:
    """This run's sweep.json, source-plan.json, rerun.json, runs-on.json, timings and
    estimate, the lineage's manifest, the job outputs (run, fail-fast, agentx-fast,
    trim-conc, over-budget) and the summary."""
    record = facts.files.record
    if facts.refused or record is None:
        return Outcome(error=ConfigError(f"no rerun: {facts.refused}"))
    out = Outcome(make_folders=True)
    out.stderr = [f"infx: warning: not counted as a result: {t}" for t in facts.skipped]
    whole = facts.files.whole
    plan_jobs = jobs_of(whole)
    seen = outcomes(facts.jobs, facts.files.plan, facts.logs)
    missing_at = missing(plan_jobs, valid_points(facts.docs, facts.floors), seen)
    if request.scope == "repeat":
        chosen = repeat_positions(plan_jobs, facts.repeat)
    else:
        chosen = select(plan_jobs, missing_at, facts.files.plan, seen, request.scope)
    changed = bool(facts.recipe_changes)
    todo = plan_rerun(whole, chosen, recipe_changed=changed, source_canary=record.canary)
    if facts.other_node:
        todo.pins, todo.notes = pin_nodes([row for row, _ in todo.jobs], seen, facts.pools)
    found: list[Pair] = []
    if request.scope == "repeat" and facts.base_jobs:
        # The repeated rows only: a canary due first is no unconfirmed row.
        asked = {row_id(plan_jobs[i][0]) for i in chosen}
        repeated = [job for job in todo.jobs if row_id(job[0]) in asked]
        found = pairs(repeated, base_rows(facts.base_jobs), source_nodes(seen), facts.pools)
        todo.plan = with_partners(todo.plan, found)
        todo.jobs = jobs_of(todo.plan)
        todo.pins = {**todo.pins, **paired_pins(found)}
    costs = estimate(todo.jobs, facts.timings.durations(), record.agentx_fast, facts.node_gpus)
    before = lineage_before(record, facts.lineage_hours)
    budget = replace(verdict(costs, record.category, facts.budgets), before=before)
    if budget.over and before and not record.held:
        out.stderr.append(
            f"infx: run {record.root}'s lineage was priced at {before:,.1f} GPU-hours before "
            "this rerun: with it, over budget; the rerun waits for approval"
        )
    spent = round(budget.lineage_hours, 3) if todo.jobs else round(before, 3)
    mine = record.rerun(request.this_run, facts.head_sha, request.scope, spent)
    if record.held:
        # Whoever asked for the lineage's sweep may not spend GPU-hours: a reviewer
        # approved that run, not this one, which the workflow's token dispatched.
        held = f"run {record.root}'s sweep waited for approval: {record.held}"
        budget = replace(budget, held=held)
        if budget.over:
            out.stderr.append(f"infx: {held}: the rerun waits for approval")
    wall = wall_minutes(costs, {label: len(nodes) for label, nodes in facts.pools.items()})
    folder = request.output_dir
    out.files[folder / PLAN_FILE] = json_bytes(todo.plan)
    out.files[folder / SOURCE_PLAN_FILE] = json_bytes(whole)
    out.files[folder / RECORD_FILE] = json_bytes(mine.as_json())
    # The lineage's own record of what it measured: the source's, with the files this
    # checkout's jobs read; not reusable when a changed file's rows did not all run again.
    rows, again = [row for row, _ in plan_jobs], [row for row, _ in todo.jobs]
    measured = lineage(facts.manifest, facts.files_now, rows, again, facts.pools)
    out.files[request.manifest_file] = json_bytes(measured)
    if measured["sweep"]["reusable"] != facts.manifest["sweep"]["reusable"]:
        out.stderr.append(
            "infx: warning: files the jobs read changed since run "
            f"{request.source_id} and not every row reading them runs again: this lineage's "
            "results mix two versions and cannot be reused"
        )
    out.files[folder / PINS_FILE] = json_bytes(todo.pins)
    if found:
        out.files[folder / PAIRS_FILE] = json_bytes(paired_document(found))
    if facts.files.origins:
        out.files[folder / origins.FILE] = json_bytes(origins.document(facts.files.origins))
    out.files[folder / TIMINGS_FILE] = json_bytes(facts.timings.as_json())
    out.files[folder / ESTIMATE_FILE] = json_bytes(estimate_document(costs, budget, wall))
    out.outputs = {
        "run": str(bool(todo.jobs)).lower(),
        "fail-fast": str(record.fail_fast).lower(),
        "agentx-fast": str(record.agentx_fast).lower(),
        "trim-conc": str(record.options.trim_conc).lower(),
        **budget_outputs(budget),
    }
    out.summary = _summary(request, facts, todo, seen, len(plan_jobs), budget)
    out.stdout.append(out.summary)
    return out


def _summary(
    request: RerunPlanRequest,
    facts: RerunPlanFacts,
    todo: RerunPlan,
    seen: list[JobOutcome],
    planned: int,
    budget: BudgetVerdict,
) -> str:
    head = f"### Rerun of run {request.source_id} ({request.scope})\n\n"
    if not todo.jobs:
        every = f"every {request.scope} row of run {request.source_id} has a valid result"
        if request.scope == "repeat":
            every = f"run {request.source_id}'s verdict left no config unconfirmed"
        return head + f"Nothing to rerun: {every}.\n"
    canary_note = Md("")
    if todo.canary is not None:
        reason = "it had failed"
        changes = facts.recipe_changes
        if changes:
            shown = ", ".join(changes[:_SHOWN_CHANGES])
            more = len(changes) - _SHOWN_CHANGES
            reason = f"the recipe changed since: {shown}" + (
                f" and {more} more" if more > 0 else ""
            )
        canary_note = Md(f" {text(f'The canary runs first ({reason}).')}")
    sentence = (
        f"{len(todo.jobs)} of {planned} planned jobs run again.{canary_note} "
        f"**Budget**: {text(budget.text())}."
    )
    kinds = failures(seen)
    mains = {row_id(row) for row, _ in facts.base_jobs}
    rows: list[list[object]] = []
    for row, _ in todo.jobs:
        rid = row_id(row)
        first = todo.canary is not None and rid == row_id(todo.canary)
        why = "canary" if first else kinds.get(rid, "no valid result")
        if request.scope == "repeat" and not first:
            why = "repeat: unconfirmed"
            if rid in mains:
                why = "repeat: main's image beside it"
        rows.append([row["exp-name"], row["conc"], row["runner"], todo.pins.get(rid, ""), why])
    notes = "".join(f"- {text(note)}\n" for note in todo.notes)
    headers = ("job", "conc", "runner", "pinned to", "why")
    return head + f"{sentence}\n\n" + table(headers, rows) + notes

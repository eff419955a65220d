"""`infx sweep plan` and `infx sweep mode` as use cases: from the options or the Actions
event to the label decision and the refs, and from a plan and the facts around it (recorded
durations, budgets, who set the PR's sweep labels) to the files, step outputs and summary.

Pure: `infx.sweep.facts` reads what these functions take.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infx.errors import UsageError
from infx.markdown import text
from infx.matrix import origins
from infx.matrix.cost import (
    PUSH,
    BudgetVerdict,
    Durations,
    estimate,
    estimate_document,
    node_gpus,
    priced_sizes,
    verdict,
    wall_minutes,
)
from infx.matrix.options import PlanOptions
from infx.matrix.plan import canary, check_append_only_inputs
from infx.matrix.rows import PlanDocument, jobs_of
from infx.matrix.sources import Planned
from infx.matrix.summary import summary_table
from infx.sweep.labels import PRIMARY, Decision, decide_event
from infx.sweep.outcome import Outcome, json_bytes
from infx.sweep.record import RunRecord


@dataclass(frozen=True)
class PlanRequest:
    """`infx sweep plan`'s options, by their click names."""

    base: str | None
    head: str | None
    trim_conc: bool
    all_evals: bool
    evals_only: bool
    from_event: bool
    fmt: str
    output: Path | None
    manifest: Path | None
    durations: Path | None
    category: str | None
    estimate_file: Path | None
    rerun_record: Path | None
    path: str
    config_globs: tuple[str, ...]
    runners_path: str
    strict: bool

    def __post_init__(self) -> None:
        flags = (self.trim_conc, self.all_evals, self.evals_only)
        if self.from_event and (self.base or self.head or any(flags) or self.category):
            raise UsageError("--from-event takes the refs and flags from the event; drop them")
        known = ("push", *PRIMARY)
        if self.category is not None and self.category not in known:
            raise UsageError(
                f"--budget {self.category!r} is no budget category: one of {', '.join(known)}"
            )


@dataclass(frozen=True)
class EventFacts:
    """The Actions event a run plans from, and what the label decision reads besides it."""

    name: str
    payload: Mapping[str, Any]
    head_message: str  # of the PR's head commit ([skip-sweep])
    renamed: Mapping[str, str]  # [labels]: role -> the repository's name


@dataclass(frozen=True)
class PlanStart:
    """What a plan is of: the label decision, the refs (base None: where the branch left
    main) and the budget category."""

    decision: Decision
    event_name: str = "cli"
    payload: Mapping[str, Any] | None = None
    base: str | None = None
    head: str | None = None
    category: str | None = None


@dataclass(frozen=True)
class Authority:
    """Why a pull request's sweep waits for a reviewer because of who asked for it ("": it
    need not; `infx.sweep.authority`), or why that could not be read (then it waits)."""

    hold: str = ""
    unread: str = ""

    def reason(self) -> str:
        if self.unread:
            return f"who set the PR's sweep labels could not be read ({self.unread})"
        return self.hold


@dataclass(frozen=True)
class PlanFacts:
    start: PlanStart
    planned: Planned | None = None  # None: the event plans nothing
    budgets: Mapping[str, float] | None = None  # at the base
    durations: Durations | None = None  # recorded, per job key
    authority: Authority | None = None  # read for a pull request's sweep
    manifest: dict[str, Any] | None = None  # read when --manifest asks for it
    run_id: int = 0  # GITHUB_RUN_ID, for the rerun record
    sha: str = ""  # HEAD, for the rerun record
    base_sizes: Mapping[str, int] | None = None  # GPUs per node, runners.yaml at the base
    changed_inputs: Sequence[str] = ()  # job inputs an append-only diff edits


def plan_start(request: PlanRequest, event: EventFacts | None) -> PlanStart:
    """The decision, refs and budget category: the options', or the event's (a push plans
    from `before` to `after`, a pull request's merge commit from its first parent)."""
    if event is None:
        options = PlanOptions(request.trim_conc, request.all_evals, request.evals_only)
        decision = Decision(True, "options", plan=options)
        return PlanStart(decision, base=request.base, head=request.head, category=request.category)
    decision = event_decision(event)
    if not decision.run:
        return PlanStart(decision, event.name, event.payload)
    base, head = "HEAD^1", "HEAD"
    if event.name == "push":
        base, head = str(event.payload.get("before", "")), str(event.payload.get("after", ""))
        if not base.strip("0") or not head:
            raise UsageError("the push event names no `before` commit to plan from")
    return PlanStart(decision, event.name, event.payload, base, head, decision.label or PUSH)


def event_decision(event: EventFacts) -> Decision:
    return decide_event(event.name, event.payload, event.head_message, event.renamed)


def needs_authority(start: PlanStart) -> bool:
    """A pull request's sweep labels are trusted only as far as whoever set them, whatever
    the budget table holds (a push or a rerun is someone's who may push)."""
    return start.event_name == "pull_request"


def plan_outcome(request: PlanRequest, facts: PlanFacts) -> Outcome:
    """The plan as `sweep plan` writes it: JSON (split for a canary), manifest, estimate,
    rerun record, step outputs, and the approval table."""
    start, planned = facts.start, facts.planned
    if planned is None:
        return Outcome(stdout=[f"nothing to plan: {start.decision.reason}"])
    check_append_only_inputs(facts.changed_inputs)
    out = Outcome(stderr=[f"infx: warning: {warning}" for warning in planned.result.warnings])
    if planned.result.choice is not None:
        out.stderr.insert(0, f"infx: {planned.result.choice.note()}")
    if request.manifest is not None and facts.manifest is not None:
        out.files[request.manifest] = json_bytes(facts.manifest)
        unmatched = facts.manifest["sweep"]["unmatched"]
        out.stderr += [f"infx: warning: job-files pattern {p!r} matches no file" for p in unmatched]
    plan = planned.result.plan
    document: PlanDocument = plan.as_json()
    if start.decision.canary:
        row, remaining = canary(plan.as_json())
        document = {"canary": [row] if row else [], "remaining": remaining}
    runners = planned.runner_info.runners
    sizes = node_gpus(runners.labels, runners.hardware) if runners else {}
    if facts.base_sizes is not None:  # a diff's plan: its base vouches for the nodes
        sizes = priced_sizes(sizes, facts.base_sizes)
    rows = jobs_of(plan.as_json())
    costs = estimate(rows, facts.durations, start.decision.agentx_fast, sizes)
    pools = {label: len(nodes) for label, nodes in (runners.labels if runners else {}).items()}
    wall = wall_minutes(costs, pools)
    budget = verdict(costs, start.category or "", facts.budgets or {})
    if facts.authority is not None:
        budget = replace(budget, held=facts.authority.reason())
        if budget.over and budget.held:
            out.stderr.append(f"infx: {budget.held}: the sweep waits for approval")
    if request.estimate_file is not None:
        out.files[request.estimate_file] = json_bytes(estimate_document(costs, budget, wall))
    if request.from_event:
        out.outputs = budget_outputs(budget)
    if request.rerun_record is not None:
        record = replace(_record(start, facts), spent=round(budget.gpu_hours, 3))
        out.files[request.rerun_record] = json_bytes(record.as_json())
    plan_text = json.dumps(document, indent=2)
    if request.fmt == "json" and request.output is None:
        out.stdout.append(plan_text)
        return out
    if request.output is not None:
        out.files[request.output] = (plan_text + "\n").encode("utf-8")
        # Beside the plan (which stays InferenceX's, byte for byte): each row's config.
        head = planned.result.head or planned.inputs.head
        found = origins.origins(plan.selected, head)
        out.files[request.output.parent / origins.FILE] = json_bytes(origins.document(found))
    masters = planned.inputs.head.masters
    choice = planned.result.choice
    note = choice.note() if choice is not None else ""
    table = summary_table(plan, masters, costs, wall, budget if start.category else None, note)
    out.stdout.append(table)
    out.summary = f"### Sweep plan\n\n{table}\n"
    return out


def budget_outputs(budget: BudgetVerdict) -> dict[str, str]:
    """The step outputs the workflow gates the GPU jobs on."""
    return {
        "over-budget": str(budget.over).lower(),
        "gpu-hours": f"{budget.gpu_hours:.1f}",
        "budget-verdict": budget.text(),
    }


def _record(start: PlanStart, facts: PlanFacts) -> RunRecord:
    """rerun.json: what a rerun of this run needs to know."""
    pr = ((start.payload or {}).get("pull_request") or {}).get("number")
    decision = start.decision
    return RunRecord(
        run_id=facts.run_id,
        event=start.event_name,
        sha=facts.sha,
        pr=pr if isinstance(pr, int) else None,
        category=start.category or PUSH,
        options=decision.plan,
        canary=decision.canary,
        fail_fast=decision.fail_fast,
        agentx_fast=decision.agentx_fast,
        root=facts.run_id,
        held=facts.authority.reason() if facts.authority is not None else "",
    )


def mode_outcome(event: EventFacts) -> Outcome:
    """`sweep mode`: the label decision as step outputs, a summary line and JSON."""
    decision = event_decision(event)
    values = decision.outputs()
    shown = "runs" if decision.run else "skipped"
    summary = f"### Sweep mode\n\n{shown}: {text(decision.reason)}\n"
    return Outcome(outputs=values, summary=summary, stdout=[json.dumps(values)])

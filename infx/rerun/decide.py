"""Whether and what to rerun of a sweep run, as `sweep rerun`, the automatic retry and the
`/rerun-failed` comment ask it; the preview a maintainer reads; and the dispatch a read-only
job hands to one that may start workflows, checked again there.

Pure: `infx.rerun.reads` reads the facts (the rerun run itself decides again from the
artifacts, with the recipe at its checkout: `infx.rerun.plan`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

from infx.errors import ConfigError, UsageError
from infx.github.actions import CommentEvent, comment_event
from infx.markdown import Md, table, text
from infx.matrix.cost import estimate
from infx.numbers import RUN_ID
from infx.rerun.rules import (
    PlanFiles,
    RerunPlan,
    failures,
    gpu_job_hours,
    jobs_of,
    lineage_before,
    missing,
    outcomes,
    plan_gpus,
    refusal,
    rerun_plan,
    row_id,
    run_number,
    select,
    valid_points,
)
from infx.results.table.rows import Table
from infx.sweep.outcome import Outcome
from infx.sweep.record import SCOPES

if TYPE_CHECKING:
    from infx.github.client import Job, Pull, Run
    from infx.results.verdict.floors import Floors

_BRANCH = re.compile(r"[A-Za-z0-9._/-]{1,200}")
_COMMAND = re.compile(rf"/rerun-failed(?:[ \t]+{RUN_ID})?")
USAGE = "usage: /rerun-failed [<run_id>] alone in the comment"
PREVIEW_ROWS = 40


class Dispatch(TypedDict):
    """A workflow_dispatch of the sweep workflow that reruns a run."""

    workflow: str
    ref: str
    inputs: dict[str, str]


@dataclass(frozen=True)
class RerunRequest:
    """`infx sweep rerun`'s options, by their click names."""

    run_id: str
    scope: str
    automatic: bool
    dry_run: bool
    decide_only: bool
    workflow: str
    repo: str | None

    def __post_init__(self) -> None:
        run_number(self.run_id, "RUN_ID")

    def ask(self, repo: str) -> RerunAsk:
        # An infra-scope rerun is a retry: the rerun run checks it by the retry's rules.
        automatic = self.automatic or self.scope == "infra"
        return RerunAsk(int(self.run_id), self.workflow, self.scope, automatic, repo)


@dataclass(frozen=True)
class RerunAsk:
    run_id: int
    workflow: str
    scope: str
    automatic: bool  # the automatic retry (or an infra-scope rerun): the retry's rules
    repo: str  # this repository: a run of another's commits is never rerun
    pr: int | None = None  # the PR a comment asks for


@dataclass(frozen=True)
class RunFacts:
    """What a rerun decision reads of a run: its plan artifact, the workflow's runs on its
    branch, newer sweeps there, and (for a completed run with a plan) its results, jobs and
    log tails; for an automatic retry of a PR's sweep, the PR and its label's name."""

    run: Run
    files: PlanFiles | None
    branch: list[Run]
    newer: list[int]
    docs: list[Table] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    logs: dict[int, str | None] = field(default_factory=dict)
    pull: Pull | None = None
    label: str = ""
    floors: Floors | None = None
    node_gpus: dict[str, int] = field(default_factory=dict)  # runner label -> GPUs per node


@dataclass
class Decision:
    run: Run | None
    reason: str
    dispatch: Dispatch | None = None
    preview: str = ""


@dataclass
class RerunOutcome(Outcome):
    """An outcome that may start a workflow and react to the comment that asked, then say
    `after`."""

    dispatch: Dispatch | None = None
    react: tuple[int, str] | None = None  # (comment id, reaction)
    after: list[str] = field(default_factory=list)


def first_refusal(facts: RunFacts, ask: RerunAsk) -> str | None:
    """Why the run may not be rerun, as far as the run itself says."""
    record = facts.files.record if facts.files is not None else None
    why = refusal(
        facts.run, ask.workflow, record, facts.branch, facts.newer,
        scope=ask.scope, automatic=ask.automatic, repo=ask.repo,
    )  # fmt: skip
    if why is None and ask.pr is not None and record is not None and record.pr != ask.pr:
        why = f"run {facts.run.id} is not a sweep of PR #{ask.pr}"
    return why


def retry_pr(facts: RunFacts, ask: RerunAsk) -> int | None:
    """The PR an automatic retry must look at before it spends GPU time again."""
    record = facts.files.record if facts.files is not None else None
    if not ask.automatic or record is None or record.pr is None:
        return None
    return record.pr if first_refusal(facts, ask) is None else None


def retry_refusal(pull: Pull, label: str) -> str | None:
    """Why a PR's failed sweep is not retried automatically: closed, a draft again, or its
    sweep label taken off since (someone said to stop spending on it)."""
    if pull.state != "open":
        return f"PR #{pull.number} is {pull.state}; its sweep is not retried"
    if pull.draft:
        return f"PR #{pull.number} is a draft; its sweep is not retried"
    if label not in pull.labels:
        return f"PR #{pull.number} no longer carries its sweep label {label}; not retried"
    return None


def refused(facts: RunFacts, ask: RerunAsk) -> str | None:
    why = first_refusal(facts, ask)
    if why is None and facts.pull is not None:
        why = retry_refusal(facts.pull, facts.label)
    return why


def decide_rerun(facts: RunFacts, ask: RerunAsk) -> Decision:
    """Whether and what to rerun of a run: the rows without a valid result (by this
    checkout's floors, and by the job's own verdict where there are none: an eval that
    failed its floor check left a score in the table), of the scope asked."""
    why, files = refused(facts, ask), facts.files
    record = files.record if files is not None else None
    if why is not None or files is None or record is None:
        return Decision(facts.run, why or "no plan")
    run, whole = facts.run, files.whole
    plan_jobs = jobs_of(whole)
    seen = outcomes(facts.jobs, files.plan, facts.logs)
    missing_at = missing(plan_jobs, valid_points(facts.docs, facts.floors), seen)
    chosen = select(plan_jobs, missing_at, files.plan, seen, ask.scope)
    if not chosen:
        return Decision(run, f"nothing to rerun: no {ask.scope} row of run {run.id} lacks a result")
    todo = rerun_plan(whole, chosen, recipe_changed=False, source_canary=record.canary)
    kinds = failures(seen)
    inputs = {"rerun-of": str(run.id), "scope": ask.scope}
    if record.pr is not None:
        inputs["pr-number"] = str(record.pr)
    dispatch: Dispatch = {"workflow": ask.workflow, "ref": run.head_branch or "", "inputs": inputs}
    shown = preview(files, todo, len(plan_jobs), kinds, facts.node_gpus, priced_before(facts))
    return Decision(run, f"rerun {len(todo.jobs)} job(s) of run {run.id}", dispatch, shown)


def priced_before(facts: RunFacts) -> tuple[float, bool]:
    """What the run's lineage was priced at before a rerun of it, as far as the run shows,
    and whether that is only a floor: the record's `spent`; a PR's run, no lower than the
    GPU jobs GitHub recorded for it (the rerun's planning job also reads the runs before it
    on its branch, so the figure it enforces may be higher)."""
    record = facts.files.record if facts.files is not None else None
    if record is None or facts.files is None:
        return 0.0, False
    if record.pr is None:
        return lineage_before(record, None), False
    held = plan_gpus(jobs_of(facts.files.whole), facts.node_gpus, {})
    return lineage_before(record, gpu_job_hours(facts.jobs, facts.node_gpus, held)), True


def preview(
    files: PlanFiles,
    todo: RerunPlan,
    whole_jobs: int,
    kinds: dict[str, str],
    node_gpus: dict[str, int] | None = None,
    before: tuple[float, bool] = (0.0, False),
) -> str:
    """What a rerun would cost (GPU-hours held: whole nodes) against a full one, what the
    budget holds (its lineage: what it was priced at `before`, plus this rerun), and its
    first jobs with why each runs."""
    durations = files.timings.durations()
    agentx = bool(files.record and files.record.agentx_fast)
    costs = estimate(todo.jobs, durations, agentx, node_gpus)
    part = sum(c.held_hours for c in costs)
    used = sum(c.gpu_hours for c in costs)
    full = sum(c.held_hours for c in estimate(jobs_of(files.whole), durations, agentx, node_gpus))
    rows: list[list[object]] = []
    for row, _ in todo.jobs[:PREVIEW_ROWS]:
        why = kinds.get(row_id(row), "no valid result")
        if todo.canary is not None and row_id(row) == row_id(todo.canary):
            why = "canary, first"
        rows.append([row["exp-name"], row["conc"], row["runner"], why])
    if len(todo.jobs) > PREVIEW_ROWS:
        rows.append([Md(f"… {len(todo.jobs) - PREVIEW_ROWS} more")])
    servers = "" if round(used, 1) == round(part, 1) else f" held, {used:.1f} used by the servers"
    head = (
        f"Rerunning {len(todo.jobs)} of {whole_jobs} jobs: about {part:.1f} GPU-hours"
        f"{servers} (a full rerun: {full:.1f}).\n\n"
    )
    spent, floor = before
    if spent:
        word = "at least" if floor else "about"
        head += (
            f"The budget holds the lineage, not this dispatch: {word} {spent + part:,.1f} "
            f"GPU-hours ({part:,.1f} for this rerun on top of {word} {spent:,.1f} its lineage "
            "was priced at); over its label's budget, the rerun waits for approval.\n\n"
        )
    return head + table(("job", "conc", "runner", "why"), rows)


def report(decision: Decision, title: str) -> RerunOutcome:
    """The decision in the step summary and on stdout."""
    summary = f"### {title}\n\n{text(decision.reason)}\n\n{decision.preview}"
    stdout = [decision.reason] + ([decision.preview.rstrip()] if decision.preview else [])
    return RerunOutcome(summary=summary, stdout=stdout)


def rerun_outcome(decision: Decision, request: RerunRequest) -> RerunOutcome:
    """`sweep rerun`: dispatch the rerun, hand it on as a step output, or say why not
    (nothing to rerun is no error)."""
    out = report(decision, "Rerun")
    if request.decide_only:
        out.outputs = {"dispatch": json.dumps(decision.dispatch) if decision.dispatch else ""}
    elif decision.dispatch is None:
        if "nothing to rerun" not in decision.reason:
            out.error = ConfigError(decision.reason)
    elif request.dry_run:
        out.stdout.append("dry run: nothing dispatched")
    else:
        out.dispatch = decision.dispatch
    return out


# --- the comment command ------------------------------------------------------------------


def new_comment(name: str, payload: dict[str, Any]) -> CommentEvent | None:
    """The comment a new issue_comment event carries (None: the event is no new comment)."""
    if name != "issue_comment" or payload.get("action") != "created":
        return None
    return comment_event(payload)


def comment_ignored(name: str, payload: dict[str, Any], received: CommentEvent | None) -> str:
    """Why an event is no `/rerun-failed` comment on a PR ("": it is one)."""
    if name != "issue_comment" or payload.get("action") != "created":
        return f"ignored: {name} {payload.get('action', '')} is not a new comment"
    if received is None or not received.on_pull_request:
        return "ignored: not a /rerun-failed comment on a pull request"
    if not received.body.strip().startswith("/rerun-failed"):
        return "ignored: not a /rerun-failed comment on a pull request"
    return ""


def pinned_run(body: str) -> tuple[bool, int | None]:
    """(the comment is the command alone, the run it names)."""
    match = _COMMAND.fullmatch(body.strip())
    if match is None:
        return False, None
    return True, int(match.group(1)) if match.group(1) else None


def requester_refusal(author: str, permission: str, allowed: Collection[str]) -> str | None:
    if permission not in allowed:
        return f"{author} lacks write, maintain or admin permission"
    return None


def pull_refusal(pull: Pull, repo: str) -> str | None:
    if pull.state != "open":
        return f"PR #{pull.number} is {pull.state}"
    if pull.head_repo != repo:
        return f"PR #{pull.number} comes from a fork; its sweeps never ran"
    return None


@dataclass(frozen=True)
class CommentFacts:
    """What a `/rerun-failed` comment's decision reads, up to the first refusal."""

    refusal: str = ""
    ask: RerunAsk | None = None
    facts: RunFacts | None = None


def comment_decision(found: CommentFacts) -> Decision:
    if found.ask is None or found.facts is None:
        return Decision(None, found.refusal)
    return decide_rerun(found.facts, found.ask)


def comment_outcome(
    received: CommentEvent, decision: Decision, *, decide_only: bool
) -> RerunOutcome:
    """`rerun-failed`: react +1 and dispatch an accepted command, -1 to a refused one (or
    hand both on as step outputs)."""
    accepted = decision.dispatch is not None
    reaction = "+1" if accepted else "-1"
    out = report(decision, f"/rerun-failed {'accepted' if accepted else 'refused'}")
    if decide_only:
        dispatch = json.dumps(decision.dispatch) if decision.dispatch else ""
        out.outputs = {"reaction": reaction, "dispatch": dispatch}
        return out
    out.dispatch = decision.dispatch
    out.react = (received.comment_id, reaction)
    return out


# --- carrying a decision out --------------------------------------------------------------


def checked_dispatch(dispatch: str, workflow: str) -> Dispatch:
    """The dispatch a read-only job decided, refused unless it has exactly the shape a rerun
    dispatch has (a forged output cannot start another workflow or pass other inputs)."""
    try:
        data = json.loads(dispatch)
    except json.JSONDecodeError:
        raise UsageError("the decided dispatch is not JSON") from None
    if not isinstance(data, dict) or set(data) != {"workflow", "ref", "inputs"}:
        raise UsageError("the decided dispatch must be {workflow, ref, inputs}")
    if data["workflow"] != workflow:
        raise UsageError(f"the decided dispatch starts {data['workflow']!r}, not {workflow}")
    ref = data["ref"]
    if not isinstance(ref, str) or not _BRANCH.fullmatch(ref) or ".." in ref:
        raise UsageError("the decided dispatch's ref is not a branch name")
    inputs = data["inputs"]
    if not isinstance(inputs, dict) or not {"rerun-of", "scope"} <= set(inputs) <= {
        "rerun-of",
        "scope",
        "pr-number",
    }:
        raise UsageError("the decided dispatch's inputs must be rerun-of, scope and pr-number")
    run_number(inputs["rerun-of"], "rerun-of")
    if "pr-number" in inputs:
        run_number(inputs["pr-number"], "pr-number")
    if inputs["scope"] not in SCOPES:
        raise UsageError(f"the decided dispatch's scope must be one of {', '.join(SCOPES)}")
    return cast(Dispatch, data)


def check_reaction(reaction: str) -> None:
    if reaction not in ("", "+1", "-1"):
        raise UsageError(f"reaction must be +1, -1 or empty, not {reaction!r}")


def carried_dispatch(
    dispatch: str, reaction: str, comment: CommentEvent | None, workflow: str
) -> Dispatch | None:
    """The dispatch `dispatch-rerun` was handed (None: there is none), checked before the
    run it names is read; a comment's dispatch comes only with its +1."""
    if not dispatch:
        return None
    if comment is not None and reaction != "+1":
        raise UsageError("a dispatch comes only with an accepted (+1) command")
    return checked_dispatch(dispatch, workflow)


def dispatch_outcome(
    data: Dispatch | None,
    run: Run | None,
    comment: CommentEvent | None,
    reaction: str,
    *,
    workflow: str,
    repo: str,
) -> RerunOutcome:
    """`dispatch-rerun`: start the rerun only of a run of this workflow, on that run's own
    branch and commits (for a comment, of the comment's own PR); react to the comment."""
    out = RerunOutcome()
    if data is None or run is None:
        out.stdout.append("nothing to dispatch")
    else:
        if run.head_branch != data["ref"] or not run.path.endswith(f".github/workflows/{workflow}"):
            raise UsageError(f"run {run.id} is not a {workflow} run on {data['ref']}")
        if run.head_repo != repo:
            raise UsageError(f"run {run.id} ran commits of {run.head_repo}, not {repo}")
        if comment is not None and data["inputs"].get("pr-number") != str(comment.issue_number):
            raise UsageError(f"the dispatch is not for PR #{comment.issue_number}")
        out.dispatch = data
    if comment is not None and reaction:
        out.react = (comment.comment_id, reaction)
        out.after.append(f"reacted {reaction} to comment {comment.comment_id}")
    return out

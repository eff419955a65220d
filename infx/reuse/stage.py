"""`/stage-results [<run_id>]`: hand a PR's sweep results to the staging pipeline.

Pure rules over facts read beforehand (`infx.reuse.facts`); the command's edge
(`infx.reuse.edge`) dispatches and reacts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from infx.github.actions import CommentEvent
from infx.github.client import Artifact, Comment, LabelEvent, Pull
from infx.github.permissions import WRITE_PERMISSIONS
from infx.markdown import code, table, text
from infx.reuse.commands import STAGE_USAGE, mentions_stage, stage_command
from infx.reuse.handoff import STAGE_EVENT, CommentOutcome, Decision, Dispatch, StagePayload
from infx.reuse.issuer import Issued, vouched_problem
from infx.reuse.source import AGGREGATE_ARTIFACTS, Candidate, ambiguous, check_run
from infx.sweep.labels import FULL_SWEEP, sweep_label_problem

METADATA_ARTIFACT = "changelog-metadata"


@dataclass(frozen=True)
class StageFacts:
    """What the API said about the requester, the PR and its candidate runs."""

    comment: Comment
    permission: str
    pull: Pull | None = None  # None: the requester lacks permission, nothing more was read
    commits: frozenset[str] = frozenset()
    label_events: tuple[LabelEvent, ...] = ()
    candidates: tuple[Candidate, ...] = ()  # pinned: the pinned run if it exists
    exhausted: bool = False  # more candidates existed than MAX_CANDIDATES
    # The issuer's receipt of the chosen run (run id -> receipt), and the main branch its
    # checkout must have merged with: which pull request a run ran for is GitHub's word.
    issued: Mapping[int, Issued] = field(default_factory=dict)
    main_branch: str = "main"


@dataclass(frozen=True)
class StageResult:
    reaction: str | None
    reason: str
    staged: dict[str, str] = field(default_factory=dict)  # artifact -> staged name
    dispatch: StagePayload | None = None  # the repository dispatch payload to send


def label_active_at(
    events: Iterable[LabelEvent], labels: Iterable[str], when: datetime
) -> set[str]:
    """Which of `labels` were on the PR at `when`, replayed from labeled/unlabeled events."""
    wanted = set(labels)
    active: set[str] = set()
    for event in sorted(events, key=lambda e: e.created_at):
        if event.created_at > when:
            break
        if event.label in wanted:
            (active.add if event.action == "labeled" else active.discard)(event.label)
    return active


def result_artifacts(artifacts: Iterable[Artifact]) -> list[Artifact]:
    """What a run produced to stage: the aggregate tables, or the agentic jobs' own files."""
    return [
        a
        for a in artifacts
        if not a.expired and (a.name in AGGREGATE_ARTIFACTS or a.name.startswith("bmk_agentic_"))
    ]


def staged_name(pr: int, run_id: int, artifact: str) -> str:
    return f"pr{pr}-run{run_id}-{artifact}"


def stage_ignores(event: CommentEvent) -> str | None:
    """Why a comment event is none of /stage-results' business (None: it is)."""
    if not mentions_stage(event.body):
        return "comment is not a /stage-results command"
    if not event.on_pull_request:
        return "comment is on an issue, not a pull request"
    return None


def stage_refusal(event: CommentEvent) -> str | None:
    """The usage line when the comment is not exactly the command."""
    valid, _ = stage_command(event.body)
    return None if valid else STAGE_USAGE


def stageable(
    candidate: Candidate,
    pull: Pull,
    commits: frozenset[str],
    events: tuple[LabelEvent, ...],
    workflow: str,
    repo: str,
) -> tuple[str | None, list[Artifact]]:
    """Why a run cannot be staged (None: it can), and the artifacts to stage."""
    run = candidate.run
    if run.event != "pull_request":
        # A dispatched run (a rerun) carries the results of whatever its `rerun-of` named,
        # a lineage nothing here checks: staged under this PR's name, they would pass for it.
        return f"run {run.id} was triggered by {run.event}, not pull_request", []
    if run.head_branch != pull.head_ref:
        # Another branch's run of a commit this PR holds (merged in, or branched from) ran
        # that branch's merge, not this PR's.
        shown = run.head_branch or "an unknown branch"
        return (
            f"run {run.id} ran branch {shown}, not PR #{pull.number}'s branch {pull.head_ref}",
            [],
        )
    why = check_run(run, commits, workflow, True, repo)
    if why:
        return why, []
    if not label_active_at(events, FULL_SWEEP, run.created_at):
        return f"run {run.id} started without a full-sweep label on the PR", []
    metadata = [a for a in candidate.artifacts if a.name == METADATA_ARTIFACT and not a.expired]
    results = result_artifacts(candidate.artifacts)
    if not metadata or not results:
        return f"run {run.id} lacks unexpired {METADATA_ARTIFACT} and result artifacts", []
    staged = metadata + results
    why = ambiguous(staged, sorted({a.name for a in staged}), run.id)
    if why:
        return why, []
    return None, staged


def chosen_run(
    event: CommentEvent, facts: StageFacts, pull: Pull, workflow: str, repo: str
) -> tuple[Candidate | None, list[Artifact], str]:
    """The run a /stage-results comment stages (pinned, else the newest stageable one) and
    its artifacts, or None and why there is none."""
    _, run_id = stage_command(event.body)
    if run_id is not None:
        found = [c for c in facts.candidates if c.run.id == run_id]
        if not found:
            return None, [], f"run {run_id} does not exist"
        why, artifacts = stageable(
            found[0], pull, facts.commits, facts.label_events, workflow, repo
        )
        return (None, [], why) if why else (found[0], artifacts, "")
    valid = [
        (c, artifacts)
        for c in facts.candidates
        for why, artifacts in [
            stageable(c, pull, facts.commits, facts.label_events, workflow, repo)
        ]
        if why is None
    ]
    if not valid:
        more = "; pin one of the older runs with /stage-results <run_id>" if facts.exhausted else ""
        return None, [], f"no stageable {workflow} run on PR #{pull.number}{more}"
    chosen, artifacts = max(valid, key=lambda pair: (pair[0].run.created_at, pair[0].run.id))
    why = skipped_rerun(chosen, facts.candidates, pull, workflow, repo)
    return (None, [], why) if why else (chosen, artifacts, "")


def skipped_rerun(
    chosen: Candidate, candidates: Iterable[Candidate], pull: Pull, workflow: str, repo: str
) -> str:
    """Why an unpinned /stage-results does not stage `chosen` ("": it does): a run of the
    sweep workflow dispatched on the PR's branch after it (a `/rerun-failed`, the infra
    retry, a repeat) holds the PR's newer results, which are never staged, so staging
    `chosen` would pass its older results off as the PR's latest. A pin of `chosen` says
    that is meant."""
    key = (chosen.run.created_at, chosen.run.id)
    path = f".github/workflows/{workflow}"
    newer = [
        c.run
        for c in candidates
        if c.run.event == "workflow_dispatch"
        and c.run.head_repo == repo
        and c.run.path.split("@", 1)[0] == path
        and (c.run.created_at, c.run.id) > key
    ]
    if not newer:
        return ""
    rerun = max(newer, key=lambda r: (r.created_at, r.id))
    return (
        f"run {rerun.id} ({rerun.event}), newer than run {chosen.run.id}, is PR "
        f"#{pull.number}'s latest sweep, and a dispatched rerun is never staged (it carries "
        f"its source's results, a lineage staging does not check); the newest stageable run "
        f"is {chosen.run.id}, whose results lack the rerun's: to stage them anyway, comment "
        f"/stage-results {chosen.run.id}"
    )


def decide_stage(
    event: CommentEvent, facts: StageFacts | None, workflow: str, repo: str
) -> StageResult:
    """What to do about a /stage-results comment; `facts` is None when nothing was read."""
    why = stage_ignores(event)
    if why:
        return StageResult(None, why)
    usage = stage_refusal(event)
    if usage or facts is None:
        return StageResult("-1", usage or STAGE_USAGE)
    # The requester is the comment's author, never whoever re-runs the job.
    comment = facts.comment
    if facts.permission not in WRITE_PERMISSIONS:
        return StageResult("-1", f"{comment.author} lacks write, maintain or admin permission")
    pull = facts.pull
    if pull is None:
        return StageResult("-1", f"PR #{event.issue_number} was not read")
    problem = sweep_label_problem(pull.number, pull.labels, reuse=False)
    if problem:
        return StageResult("-1", problem)
    chosen, artifacts, why = chosen_run(event, facts, pull, workflow, repo)
    if chosen is None:
        return StageResult("-1", why)
    run = chosen.run
    # The same head branch and commit can be another PR's (into another base): only the
    # issuer's receipt says which PR's merge the run checked out, as reuse requires.
    why = vouched_problem(facts.issued.get(run.id), run, pull, facts.main_branch) or ""
    if why:
        return StageResult("-1", why)
    staged = {a.name: staged_name(pull.number, run.id, a.name) for a in artifacts}
    payload: StagePayload = {
        "pr-number": pull.number,
        "run-id": run.id,
        "run-attempt": run.run_attempt,
        "requested-by": comment.author,
        "artifacts": [{"id": a.id, "name": a.name, "staged-as": staged[a.name]} for a in artifacts],
    }
    return StageResult("+1", f"staged {len(staged)} artifact(s) of run {run.id}", staged, payload)


def stage(
    event: CommentEvent, facts: StageFacts | None, workflow: str, repo: str
) -> CommentOutcome:
    """`infx stage-results`: the reaction, the dispatch, and the summary with the table of
    what is staged under which name."""
    result = decide_stage(event, facts, workflow, repo)
    dispatch = Dispatch(STAGE_EVENT, result.dispatch) if result.dispatch else None
    summary = f"### /stage-results\n\n{text(result.reason)}\n\n"
    if result.staged:
        rows = [(code(name), code(staged)) for name, staged in result.staged.items()]
        summary += table(("artifact", "staged as"), rows) + "\n"
    lines = [result.reason, *(f"  {name} -> {staged}" for name, staged in result.staged.items())]
    return CommentOutcome(Decision(result.reaction, dispatch), summary, tuple(lines))

"""Reusing a PR's green sweep at merge: who may ask, which run, and whether it measured
what merges.

Pure rules over facts read beforehand (`infx.reuse.facts`) and over the manifest of
what merges (`infx.reuse.preview`). The rule is one sentence: what merges is what was
measured. The run's own manifest, written by its planning job, must equal the manifest of
what merges field for field (options, plan, configs as parsed, runner labels, recipe and
template bytes). Fail closed: every doubt ends in "no reuse" with a reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from infx.errors import ReuseError
from infx.github.actions import CommentEvent
from infx.github.client import Artifact, Comment, Pull, Run, Status
from infx.github.permissions import PREFILTER_ASSOCIATIONS, WRITE_PERMISSIONS, authorized
from infx.matrix.manifest import ARTIFACT as MANIFEST_ARTIFACT
from infx.matrix.manifest import differences, evaluated, summarize
from infx.reuse.commands import ReuseCommand, reuse_command
from infx.sweep.labels import sweep_label_problem

RESULTS_ARTIFACT = "results_bmk"
EVALS_ARTIFACT = "eval_results_all"
# Uploaded once per sweep run, so one listing of each finds every run with results.
AGGREGATE_ARTIFACTS = (RESULTS_ARTIFACT, EVALS_ARTIFACT)
# What republish downloads by name from the source run and uploads as this run's.
REPUBLISHED = (*AGGREGATE_ARTIFACTS, "changelog-metadata", MANIFEST_ARTIFACT)
# A zip archive holding no file at all is this many bytes (its end record alone).
EMPTY_ARCHIVE = 22
# Runs read per unpinned search: a PR with more failed runs carrying results pins one.
MAX_CANDIDATES = 10
STATUS_CONTEXT = "infx/reuse"
# A PR's own sweep, or a rerun of what it left without results (`infx sweep rerun`).
SOURCE_EVENTS = ("pull_request", "workflow_dispatch")
# GitHub refuses a commit status description longer than this.
STATUS_LENGTH = 140


@dataclass(frozen=True)
class Request:
    """A reuse request; `comment` is None for the merge helper's own (unposted) request."""

    comment: Comment | None
    command: ReuseCommand


@dataclass(frozen=True)
class Candidate:
    """A run that might be the source, with the artifacts known for it."""

    run: Run
    artifacts: tuple[Artifact, ...]


@dataclass(frozen=True)
class Lineage:
    """What a rerun run (workflow_dispatch) says of itself: the PR whose sweep it reran and
    the lineage's original run, read from its sweep-plan's rerun record."""

    pr: int | None
    root: Run | None
    problem: str = ""


@dataclass(frozen=True)
class SourceFacts:
    """What the API said about a PR's possible source runs and the chosen run's record."""

    commits: frozenset[str]
    candidates: tuple[Candidate, ...]  # pinned: the pinned run if it exists
    exhausted: bool  # more candidates existed than MAX_CANDIDATES
    manifest: Mapping[str, Any] | None = None  # the chosen run's sweep manifest, when read
    manifest_problem: str = ""  # why it was not read
    lineage: Lineage | None = None  # read when the chosen run is a rerun (workflow_dispatch)


@dataclass(frozen=True)
class PullFacts:
    """One PR: its comments, the permissions of those asking for reuse, its source runs."""

    pull: Pull
    comments: tuple[Comment, ...]
    permissions: Mapping[str, str]
    source: SourceFacts | None = None  # None: nobody asked, nothing more was read


@dataclass(frozen=True)
class Merging:
    """What merges, as a reuse decision sees it: its manifest, or why it has none."""

    manifest: Mapping[str, Any] | None
    problem: str = ""


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str
    run: Run | None = None  # the source run when ok
    pull: Pull | None = None


# --- who asked -----------------------------------------------------------------------


def asking(comments: Iterable[Comment]) -> list[tuple[Comment, ReuseCommand]]:
    """Comments carrying a command, newest first, whose author passes the cheap pre-filter."""
    found = [
        (comment, command)
        for comment in comments
        if comment.association in PREFILTER_ASSOCIATIONS
        and (command := reuse_command(comment.body)) is not None
    ]
    return sorted(found, key=lambda pair: (pair[0].created_at, pair[0].id), reverse=True)


def newest_request(comments: Iterable[Comment], permissions: Mapping[str, str]) -> Request | None:
    """The last command line of the newest authorized comment carrying one."""
    for comment, command in asking(comments):
        if permissions.get(comment.author) in WRITE_PERMISSIONS:
            return Request(comment, command)
    return None


# --- which run -------------------------------------------------------------------------


def unexpired(artifacts: Iterable[Artifact], name: str) -> Artifact | None:
    """The unexpired artifact called `name`, if any."""
    return next((a for a in artifacts if a.name == name and not a.expired), None)


def ambiguous(artifacts: Iterable[Artifact], names: Iterable[str], run_id: int) -> str | None:
    """Why the run's artifacts do not say one thing (None: they do): two unexpired artifacts
    of one name (a later attempt's beside the first, say) leave open which one is the run's
    record and which one republish would publish."""
    artifacts = list(artifacts)
    for name in names:
        count = sum(1 for a in artifacts if a.name == name and not a.expired)
        if count > 1:
            return (
                f"run {run_id} has {count} unexpired {name} artifacts; which one is its own "
                "is unknown"
            )
    return None


def empty(artifacts: Iterable[Artifact], name: str, run_id: int) -> str | None:
    """Why the run's `name` artifact holds nothing to publish (None: it may hold something):
    an archive no bigger than an empty zip."""
    found = unexpired(artifacts, name)
    if found is not None and found.size is not None and found.size <= EMPTY_ARCHIVE:
        return f"run {run_id}'s {name} artifact is empty ({found.size} bytes)"
    return None


def check_run(
    run: Run, commits: frozenset[str], workflow: str, pinned: bool, repo: str
) -> str | None:
    """Why `run` cannot be a source run (None: it can), from the run alone. A PR's sweep is
    a pull_request run, or a rerun of one (workflow_dispatch; its lineage is checked once it
    is chosen)."""
    if run.event not in SOURCE_EVENTS:
        return f"run {run.id} was triggered by {run.event}, not pull_request"
    if run.head_repo != repo:
        return f"run {run.id} ran commits of {run.head_repo or 'an unknown repository'}, not {repo}"
    if run.status != "completed":
        return f"run {run.id} is {run.status}, not completed"
    allowed = ("success", "failure", "cancelled") if pinned else ("success",)
    if run.conclusion not in allowed:
        return f"run {run.id} concluded {run.conclusion}"
    if run.path.split("@", 1)[0] != f".github/workflows/{workflow}":
        return f"run {run.id} belongs to {run.path}, not .github/workflows/{workflow}"
    if run.head_sha not in commits:
        return f"run {run.id} ran {run.head_sha[:12]}, which is not one of the PR's commits"
    return None


def usable(
    candidate: Candidate, commits: frozenset[str], workflow: str, pinned: bool, repo: str
) -> bool:
    return check_run(candidate.run, commits, workflow, pinned, repo) is None and bool(
        unexpired(candidate.artifacts, RESULTS_ARTIFACT)
    )


def pick_run(
    request: Request, facts: SourceFacts, workflow: str, number: int, repo: str
) -> tuple[Candidate | None, str]:
    """The source run for `request` and "", or None and why there is none."""
    pinned = request.command.run_id
    if pinned is not None:
        found = [c for c in facts.candidates if c.run.id == pinned]
        if not found:
            return None, f"run {pinned} does not exist in {repo}"
        why = check_run(found[0].run, facts.commits, workflow, True, repo)
        if why:
            return None, why
        if not unexpired(found[0].artifacts, RESULTS_ARTIFACT):
            return None, f"run {pinned} has no unexpired {RESULTS_ARTIFACT} artifact"
        return found[0], ""
    runs = [c for c in facts.candidates if usable(c, facts.commits, workflow, False, repo)]
    if runs:
        return max(runs, key=lambda c: (c.run.created_at, c.run.id)), ""
    if facts.exhausted:
        return None, (
            f"none of the {MAX_CANDIDATES} newest runs with results on PR #{number}'s commits "
            "is a completed, successful pull_request run; pin one with /reuse-sweep-run <run_id>"
        )
    return None, (
        f"no completed, successful {workflow} run of PR #{number}'s commits "
        f"with an unexpired {RESULTS_ARTIFACT} artifact"
    )


# --- did it measure what merges --------------------------------------------------------


def pull_problem(pull: Pull, repo: str, main_branch: str, require_merged: bool) -> str | None:
    if pull.head_repo != repo:
        return f"PR #{pull.number} comes from a fork"
    if pull.base_ref != main_branch:
        return f"PR #{pull.number} merges into {pull.base_ref}, not {main_branch}"
    problem = sweep_label_problem(pull.number, pull.labels, reuse=True)
    if problem:
        return problem
    if require_merged and pull.merged_at is None:
        return f"PR #{pull.number} is not merged"
    return None


def lineage_problem(
    run: Run, facts: SourceFacts, pull: Pull, workflow: str, repo: str
) -> str | None:
    """Why a rerun run is not a rerun of this PR's own sweep (None: it is, or it is no
    rerun): its record names the PR and a pull_request run of the PR's commits."""
    if run.event != "workflow_dispatch":
        return None
    found = facts.lineage
    if found is None or found.problem:
        why = found.problem if found else "its rerun record was not read"
        return f"run {run.id} is a workflow_dispatch run but no rerun of a PR sweep: {why}"
    if found.pr != pull.number:
        swept = f"PR #{found.pr}'s" if found.pr else "main's"
        return f"run {run.id} reran {swept} sweep, not PR #{pull.number}'s"
    root = found.root
    if root is None:
        return f"run {run.id}'s lineage names no original run"
    if root.event != "pull_request":
        return f"run {run.id}'s original run {root.id} was triggered by {root.event}"
    why = check_run(root, facts.commits, workflow, True, repo)
    return f"run {run.id}'s original run: {why}" if why else None


def measured_problem(chosen: Candidate, facts: SourceFacts, merging: Merging) -> str | None:
    """Why the chosen run's results cannot stand for what merges (None: they can): its own
    record must say it is a reusable sweep, its results must all be there, and what it
    measured must equal what merges."""
    run = chosen.run
    why = ambiguous(chosen.artifacts, REPUBLISHED, run.id)
    if why:
        return why
    why = empty(chosen.artifacts, RESULTS_ARTIFACT, run.id)
    if why:
        return why
    record = facts.manifest
    if record is None:
        return facts.manifest_problem or f"run {run.id} has no {MANIFEST_ARTIFACT} artifact"
    sweep = record["sweep"]
    if not sweep["reusable"]:
        options = record["measured"]["options"]
        on = [name for name in ("evals-only", "agentx-fast") if options.get(name)]
        label = (sweep["label"] or "no sweep label") + (f" with {', '.join(on)}" if on else "")
        return f"run {run.id} recorded itself as not reusable: planned under {label}"
    if evaluated(record):
        if not unexpired(chosen.artifacts, EVALS_ARTIFACT):
            return f"run {run.id} planned evals but has no unexpired {EVALS_ARTIFACT} artifact"
        why = empty(chosen.artifacts, EVALS_ARTIFACT, run.id)
        if why:
            return why
    if merging.manifest is None:
        return f"what merges cannot be planned: {merging.problem}"
    found = differences(record, merging.manifest)
    if found:
        return f"run {run.id} did not measure what merges: {summarize(found)}"
    return None


def verdict(
    pull: Pull,
    request: Request,
    facts: SourceFacts,
    merging: Merging,
    *,
    repo: str,
    workflow: str,
    main_branch: str = "main",
    require_merged: bool,
) -> Verdict:
    """Whether `request` on `pull` names a source run that measured what merges."""
    problem = pull_problem(pull, repo, main_branch, require_merged)
    if problem:
        return Verdict(False, problem, pull=pull)
    chosen, why = pick_run(request, facts, workflow, pull.number, repo)
    if chosen is None:
        return Verdict(False, why, pull=pull)
    why = lineage_problem(chosen.run, facts, pull, workflow, repo) or measured_problem(
        chosen, facts, merging
    )
    if why:
        return Verdict(False, why, pull=pull)
    run = chosen.run
    return Verdict(
        True, f"run {run.id} of PR #{pull.number} measured exactly what merges", run, pull
    )


def reuse_status(found: Verdict) -> Status:
    """The `infx/reuse` commit status a PR head carries for a standing request."""
    if found.ok and found.run is not None:
        text, state = f"ready: run {found.run.id} measured exactly this", "success"
    else:
        text, state = f"not ready: {found.reason}", "failure"
    if len(text) > STATUS_LENGTH:
        text = text[: STATUS_LENGTH - 3] + "..."
    return Status(STATUS_CONTEXT, state, text)


# --- the commands ---------------------------------------------------------------------


@dataclass(frozen=True)
class GateEvent:
    """The sweep workflow run asking: push to main, or a PR event."""

    name: str
    commit_sha: str
    ref: str
    action: str | None = None
    pr_number: int | None = None
    before: str | None = None  # a push: the branch's commit before it


@dataclass(frozen=True)
class Local:
    """What the checkout of the asking run says: the pushed commit's first parent, and the
    manifest of what merges (the push, or the PR's merge commit)."""

    first_parent: str | None
    merging: Merging


@dataclass(frozen=True)
class GateResult:
    reuse_enabled: bool = False
    skip_pr_sweep: bool = False
    reason: str = ""
    verdict: Verdict | None = None

    def outputs(self) -> dict[str, str]:
        run = self.verdict.run if self.verdict and self.verdict.ok else None
        pull = self.verdict.pull if self.verdict else None
        return {
            "reuse-enabled": str(self.reuse_enabled).lower(),
            "skip-pr-sweep": str(self.skip_pr_sweep).lower(),
            "reuse-source-run-id": str(run.id) if run else "",
            "reuse-source-run-attempt": str(run.run_attempt) if run else "",
            "reuse-source-run-url": run.html_url if run else "",
            "reuse-source-pr-number": str(pull.number) if pull and run else "",
            "reuse-source-head-sha": run.head_sha if run else "",
            "reuse-reason": self.reason,
        }


def gate_needs_nothing(event: GateEvent, main_branch: str = "main") -> str | None:
    """Why this workflow run cannot reuse anything, whatever GitHub says (None: ask it)."""
    if event.name == "pull_request":
        if event.action != "synchronize" or event.pr_number is None:
            return "only a pull_request synchronize can skip the PR sweep"
        return None
    if event.name != "push" or event.ref != f"refs/heads/{main_branch}":
        return f"{event.name} to {event.ref} never reuses"
    if not (event.before or "").strip("0"):
        return f"the push to {event.ref} names no commit before it"
    return None


def push_problem(event: GateEvent, pull: Pull, local: Local) -> str | None:
    """Why this push is not exactly PR #N's merge (None: it is): its range must hold the
    merge commit alone, or whatever else it brings would never be swept."""
    after = event.commit_sha
    if pull.merge_commit_sha != after:
        return f"commit {after[:12]} is not PR #{pull.number}'s merge commit"
    if local.first_parent is None or local.first_parent != event.before:
        return (
            f"the push {(event.before or '')[:12]}..{after[:12]} holds more than PR "
            f"#{pull.number}'s merge commit (its first parent is "
            f"{(local.first_parent or 'unknown')[:12]}); what else it brings was never swept"
        )
    return None


def decide_gate(
    event: GateEvent,
    pulls: tuple[PullFacts, ...],
    local: Local,
    *,
    repo: str,
    workflow: str,
    main_branch: str = "main",
) -> GateResult:
    """The reuse decision for one workflow run of the sweep; `pulls` are the PRs read for it
    (the PR of a pull_request event, the PRs of a pushed commit)."""
    why = gate_needs_nothing(event, main_branch)
    if why:
        return GateResult(reason=why)
    if event.name == "push":
        if not pulls:
            return GateResult(reason=f"commit {event.commit_sha[:12]} belongs to no PR")
        if len(pulls) > 1:
            claimed = [p.pull.number for p in pulls if newest_request(p.comments, p.permissions)]
            if claimed:
                listed = ", ".join(f"#{p.pull.number}" for p in pulls)
                raise ReuseError(
                    f"commit {event.commit_sha[:12]} belongs to PRs {listed} and #{claimed[0]} "
                    "asks for reuse; refusing to guess which sweep to publish"
                )
            return GateResult(
                reason=f"commit {event.commit_sha[:12]} belongs to several PRs, none asks for reuse"
            )
    (facts,) = pulls
    number = facts.pull.number
    request = newest_request(facts.comments, facts.permissions)
    if request is None or facts.source is None:
        return GateResult(reason=f"no authorized /reuse-sweep-run on PR #{number}")
    found = verdict(
        facts.pull,
        request,
        facts.source,
        local.merging,
        repo=repo,
        workflow=workflow,
        main_branch=main_branch,
        require_merged=event.name == "push",
    )
    if event.name == "pull_request":
        if found.ok and facts.pull.head_sha != event.commit_sha:
            found = Verdict(
                False,
                f"PR #{number}'s head moved to {facts.pull.head_sha[:12]}; a newer event decides",
                pull=facts.pull,
            )
        if not found.ok:
            return GateResult(reason=f"PR sweep runs: {found.reason}", verdict=found)
        return GateResult(
            skip_pr_sweep=True, reason=f"PR sweep skipped: {found.reason}", verdict=found
        )
    if found.ok:
        problem = push_problem(event, facts.pull, local)
        if problem:
            found = Verdict(False, problem, pull=facts.pull)
    if not found.ok:
        return GateResult(reason=f"no reuse: {found.reason}", verdict=found)
    return GateResult(reuse_enabled=True, reason=found.reason, verdict=found)


@dataclass(frozen=True)
class AckResult:
    reaction: str | None  # "+1", "-1" or None (event ignored)
    reason: str
    verdict: Verdict | None = None  # the request's verdict, when one was reached


def ack_ignores(event: CommentEvent) -> str | None:
    """Why a comment event is none of `reuse ack`'s business (None: it is)."""
    if not event.on_pull_request:
        return "comment is on an issue, not a pull request"
    if reuse_command(event.body) is None:
        return "comment carries no /reuse-sweep-run line"
    return None


def stale(event: CommentEvent, current: Comment) -> bool:
    """The comment changed since this event was sent; a newer event decides."""
    return current.body != event.body or _stamp(current.updated_at) != event.updated_at


def decide_ack(
    event: CommentEvent,
    current: Comment | None,
    facts: PullFacts | None,
    merging: Merging,
    *,
    repo: str,
    workflow: str,
    main_branch: str = "main",
) -> AckResult:
    """The reaction to a /reuse-sweep-run comment, given the comment as the API has it now
    and its PR (None: not read, because the event is ignored or stale)."""
    why = ack_ignores(event)
    if why:
        return AckResult(None, why)
    if current is None or facts is None or stale(event, current):
        return AckResult(
            None, f"comment {event.comment_id} changed since this event; a newer event decides"
        )
    if not authorized(current, facts.permissions):
        return AckResult("-1", f"{current.author} lacks write, maintain or admin permission")
    request = newest_request(facts.comments, facts.permissions)
    if request is None or request.comment is None or request.comment.id != current.id:
        newer = request.comment.id if request and request.comment else "none"
        return AckResult(
            "-1", f"comment {current.id} is not the newest authorized request (newest: {newer})"
        )
    pull = facts.pull
    if pull.state != "open":
        return AckResult("-1", f"PR #{pull.number} is {pull.state}")
    if facts.source is None:
        return AckResult("-1", f"PR #{pull.number}'s runs were not read")
    found = verdict(
        pull,
        request,
        facts.source,
        merging,
        repo=repo,
        workflow=workflow,
        main_branch=main_branch,
        require_merged=False,
    )
    return AckResult("+1" if found.ok else "-1", found.reason, found)


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")

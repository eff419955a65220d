"""Reusing a PR's green sweep at merge: who may ask, which run, and whether it still stands.

Pure rules over facts read beforehand (`infx.workflows.facts`). Fail closed: every doubt
ends in "no reuse" with a reason.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from infx.changelog import CHANGELOG_FILE
from infx.changelog.diff import compare
from infx.errors import ReuseError
from infx.github.client import COMPARE_FILE_CAP, Artifact, Comment, LabelEvent, Pull, Run
from infx.workflows.commands import CommentEvent, ReuseCommand, reuse_command
from infx.workflows.labels import FULL_SWEEP, sweep_label_problem

PREFILTER_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
WRITE_PERMISSIONS = ("admin", "maintain", "write")
# Uploaded once per sweep run, so one listing of each finds every run with results.
AGGREGATE_ARTIFACTS = ("results_bmk", "eval_results_all")
# Runs read per unpinned search: a PR with more failed runs carrying results pins one.
MAX_CANDIDATES = 10
# Files whose content is read (4 requests each) to compare the PR's edits at the run and at
# the head; a PR whose change differs in more files than this is not reused.
MAX_COMPARED_FILES = 4
# Lines of context kept around each edit: git's own default, so an edit next to one of
# main's changes reads as a different edit.
EDIT_CONTEXT = 3


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
class PrChange:
    """What a PR changes relative to its merge base with its base branch, at one commit."""

    files: Mapping[str, str]  # filename -> status and blob (see BranchDiff)
    complete: bool
    # (at the merge base, at the commit) for the files read; None: absent there.
    texts: Mapping[str, tuple[bytes | None, bytes | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceFacts:
    """What the API said about a PR's possible source runs."""

    commits: frozenset[str]
    candidates: tuple[Candidate, ...]  # pinned: the pinned run if it exists
    exhausted: bool  # more candidates existed than MAX_CANDIDATES
    label_events: tuple[LabelEvent, ...]
    change_at_run: PrChange | None = None  # read when the chosen run's commit is not the head
    change_at_head: PrChange | None = None


@dataclass(frozen=True)
class PullFacts:
    """One PR: its comments, the permissions of those asking for reuse, its source runs."""

    pull: Pull
    comments: tuple[Comment, ...]
    permissions: Mapping[str, str]
    source: SourceFacts | None = None  # None: nobody asked, nothing more was read


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


def authorized(comment: Comment, permissions: Mapping[str, str]) -> bool:
    """author_association is only a cheap pre-filter; the collaborator permission decides."""
    return (
        comment.association in PREFILTER_ASSOCIATIONS
        and permissions.get(comment.author) in WRITE_PERMISSIONS
    )


def newest_request(comments: Iterable[Comment], permissions: Mapping[str, str]) -> Request | None:
    """The last command line of the newest authorized comment carrying one."""
    for comment, command in asking(comments):
        if permissions.get(comment.author) in WRITE_PERMISSIONS:
            return Request(comment, command)
    return None


# --- which run -------------------------------------------------------------------------


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
    return [
        a
        for a in artifacts
        if not a.expired and (a.name in AGGREGATE_ARTIFACTS or a.name.startswith("bmk_agentic_"))
    ]


def check_run(run: Run, commits: frozenset[str], workflow: str, pinned: bool) -> str | None:
    """Why `run` cannot be a source run (None: it can), from the run alone."""
    if run.event != "pull_request":
        return f"run {run.id} was triggered by {run.event}, not pull_request"
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


def usable(candidate: Candidate, commits: frozenset[str], workflow: str, pinned: bool) -> bool:
    return check_run(candidate.run, commits, workflow, pinned) is None and bool(
        result_artifacts(candidate.artifacts)
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
        why = check_run(found[0].run, facts.commits, workflow, pinned=True)
        if why:
            return None, why
        if not result_artifacts(found[0].artifacts):
            return None, f"run {pinned} has no unexpired result artifacts"
        return found[0], ""
    runs = [c for c in facts.candidates if usable(c, facts.commits, workflow, pinned=False)]
    if runs:
        return max(runs, key=lambda c: (c.run.created_at, c.run.id)), ""
    if facts.exhausted:
        return None, (
            f"none of the {MAX_CANDIDATES} newest runs with results on PR #{number}'s commits "
            "is a completed, successful pull_request run; pin one with /reuse-sweep-run <run_id>"
        )
    return None, (
        f"no completed, successful {workflow} run of PR #{number}'s commits "
        "with unexpired result artifacts"
    )


# --- does it still stand ----------------------------------------------------------------


def to_compare(at_run: Mapping[str, str], at_head: Mapping[str, str]) -> list[str]:
    """Files the PR changes at both points but not to the same blob, whose edits must be
    read to compare them; the changelog first, at most MAX_COMPARED_FILES."""
    names = [n for n in at_run if n in at_head and at_run[n] != at_head[n]]
    return sorted(names, key=lambda n: (n != CHANGELOG_FILE, n))[:MAX_COMPARED_FILES]


def edits(base: bytes | None, head: bytes | None) -> list[tuple[tuple[str, bytes, bytes], ...]]:
    """The edits from base to head as hunks of lines with EDIT_CONTEXT lines of context and
    no positions, so the same edit reads the same wherever the rest of the file moved."""
    a = (base or b"").splitlines(keepends=True)
    b = (head or b"").splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        tuple((tag, b"".join(a[i1:i2]), b"".join(b[j1:j2])) for tag, i1, i2, j1, j2 in group)
        for group in matcher.get_grouped_opcodes(EDIT_CONTEXT)
    ]


def _appended(base: bytes | None, head: bytes | None) -> bytes | None:
    diff = compare(base, head or b"")
    if diff.kind == "append":
        return diff.appended
    return b"" if diff.kind == "unchanged" else None


def same_entries(at_run: tuple[bytes | None, ...], at_head: tuple[bytes | None, ...]) -> bool:
    """The PR appends the same changelog entries at both points, but for pr-link lines the
    gate would accept as corrections (changelog.diff.compare, byte for byte)."""
    before, after = _appended(*at_run), _appended(*at_head)
    if before is None or after is None:
        return False
    return compare(before, after).kind in ("unchanged", "correction")


def changes_since(at_run: PrChange, at_head: PrChange) -> list[str]:
    """What the PR changes at its head that it did not change when the run ran, beyond
    corrected pr-link lines in the entries it appends. Both points are measured from their
    own merge base, so merging main changes nothing unless the merge edits more than main
    brought; main's own edits to a file the PR also edits are main's business."""
    if not (at_run.complete and at_head.complete):
        return [f"more than {COMPARE_FILE_CAP} files, which GitHub does not list in full"]
    offending = []
    for name in sorted(set(at_run.files) | set(at_head.files)):
        if at_run.files.get(name) == at_head.files.get(name):
            continue
        if name not in at_run.texts or name not in at_head.texts:
            offending.append(name)
        elif name == CHANGELOG_FILE:
            if not same_entries(at_run.texts[name], at_head.texts[name]):
                offending.append(f"{name} beyond pr-link lines")
        elif edits(*at_run.texts[name]) != edits(*at_head.texts[name]):
            offending.append(name)
    return offending


def pull_problem(pull: Pull, repo: str, require_merged: bool) -> str | None:
    if pull.head_repo != repo:
        return f"PR #{pull.number} comes from a fork"
    problem = sweep_label_problem(pull.number, pull.labels, reuse=True)
    if problem:
        return problem
    if require_merged and pull.merged_at is None:
        return f"PR #{pull.number} is not merged"
    return None


def verdict(
    pull: Pull,
    request: Request,
    facts: SourceFacts,
    *,
    repo: str,
    workflow: str,
    require_merged: bool,
) -> Verdict:
    """Whether `request` on `pull` names a source run whose results still stand."""
    problem = pull_problem(pull, repo, require_merged)
    if problem:
        return Verdict(False, problem, pull=pull)
    chosen, why = pick_run(request, facts, workflow, pull.number, repo)
    if chosen is None:
        return Verdict(False, why, pull=pull)
    run = chosen.run
    if not label_active_at(facts.label_events, FULL_SWEEP, run.created_at):
        return Verdict(
            False, f"run {run.id} started without a full-sweep label on the PR", pull=pull
        )
    if run.head_sha != pull.head_sha:
        if facts.change_at_run is None or facts.change_at_head is None:
            return Verdict(False, f"what changed after run {run.id} is unknown", pull=pull)
        changed = changes_since(facts.change_at_run, facts.change_at_head)
        if changed:
            return Verdict(
                False, f"commits after run {run.id} change {', '.join(changed)}", pull=pull
            )
    return Verdict(True, f"reusing run {run.id} of PR #{pull.number}", run, pull)


# --- the commands ---------------------------------------------------------------------


@dataclass(frozen=True)
class GateEvent:
    """The sweep workflow run asking: push to main, or a PR event."""

    name: str
    commit_sha: str
    ref: str
    action: str | None = None
    pr_number: int | None = None


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


def gate_needs_nothing(event: GateEvent) -> str | None:
    """Why this workflow run cannot reuse anything, whatever GitHub says (None: ask it)."""
    if event.name == "pull_request":
        if event.action != "synchronize" or event.pr_number is None:
            return "only a pull_request synchronize can skip the PR sweep"
        return None
    if event.name != "push" or event.ref != "refs/heads/main":
        return f"{event.name} to {event.ref} never reuses"
    return None


def decide_gate(
    event: GateEvent, pulls: tuple[PullFacts, ...], *, repo: str, workflow: str
) -> GateResult:
    """The reuse decision for one workflow run of the sweep; `pulls` are the PRs read for it
    (the PR of a pull_request event, the PRs of a pushed commit)."""
    why = gate_needs_nothing(event)
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
        repo=repo,
        workflow=workflow,
        require_merged=event.name == "push",
    )
    if event.name == "pull_request":
        if not found.ok:
            return GateResult(reason=f"PR sweep runs: {found.reason}", verdict=found)
        return GateResult(
            skip_pr_sweep=True, reason=f"PR sweep skipped: {found.reason} at merge", verdict=found
        )
    if not found.ok:
        return GateResult(reason=f"no reuse: {found.reason}", verdict=found)
    return GateResult(reuse_enabled=True, reason=found.reason, verdict=found)


@dataclass(frozen=True)
class AckResult:
    reaction: str | None  # "+1", "-1" or None (event ignored)
    reason: str


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
    *,
    repo: str,
    workflow: str,
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
    found = verdict(pull, request, facts.source, repo=repo, workflow=workflow, require_merged=False)
    return AckResult("+1" if found.ok else "-1", found.reason)


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")

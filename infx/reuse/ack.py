"""`infx reuse ack`: the reaction to a /reuse-sweep-run comment and the status it sets.

Pure rules over the comment as the API has it now and its PR, read through `AckReads`
(`infx.reuse.facts.ack_reads`) when the decision first needs each, as the changelog gate
reads a branch's commits: the rules say once where to stop, and reading stops there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from infx.github.actions import CommentEvent
from infx.github.client import Comment, Pull
from infx.github.permissions import authorized
from infx.markdown import text
from infx.reuse.commands import reuse_command
from infx.reuse.handoff import CommentOutcome, Decision, StatusDecision
from infx.reuse.measured import Merging, Policy, Scope, Verdict, reuse_status, verdict
from infx.reuse.source import PullFacts, Request, newest_request

# What the step summary and the log call each reaction.
VERDICT_WORDS = {"+1": "accepted", "-1": "refused", None: "ignored"}


@dataclass(frozen=True)
class AckReads:
    """What the decision reads, each when it first needs it: an ignored event reads
    nothing, a stale comment no PR, a refused request no runs, and only a request about to
    be judged what merging its PR would sweep."""

    comment: Callable[[], Comment]  # the comment as the API has it now
    pull: Callable[[Comment], PullFacts]  # its PR, comments and who may write (no runs)
    source: Callable[[PullFacts, Request], PullFacts]  # the same with the request's runs
    merging: Callable[[PullFacts], Merging]  # what merging the PR now would sweep


@dataclass(frozen=True)
class AckResult:
    reaction: str | None  # "+1", "-1" or None (event ignored)
    reason: str
    verdict: Verdict | None = None  # the request's verdict, when one was reached
    pull: Pull | None = None  # the PR judged, with the verdict


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
    reads: AckReads,
    *,
    repo: str,
    workflow: str,
    main_branch: str = "main",
    policy: Policy | None = None,
) -> AckResult:
    """The reaction to a /reuse-sweep-run comment, reading the comment as the API has it
    now, its PR and the request's runs only as far as the answer needs."""
    why = ack_ignores(event)
    if why:
        return AckResult(None, why)
    current = reads.comment()
    if stale(event, current):
        return AckResult(
            None, f"comment {event.comment_id} changed since this event; a newer event decides"
        )
    facts = reads.pull(current)
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
    facts = reads.source(facts, request)
    if facts.source is None:
        return AckResult("-1", f"PR #{pull.number}'s runs were not read")
    found = verdict(
        pull,
        request,
        facts.source,
        reads.merging(facts),
        repo=repo,
        workflow=workflow,
        main_branch=main_branch,
        require_merged=False,
        policy=policy,
    )
    return AckResult("+1" if found.ok else "-1", found.reason, found, pull)


def ack(event: CommentEvent, reads: AckReads, scope: Scope) -> CommentOutcome:
    """`infx reuse ack`: the reaction, the PR head's status when a verdict was reached, the
    step summary and the log line."""
    result = decide_ack(
        event,
        reads,
        repo=scope.repo,
        workflow=scope.workflow,
        main_branch=scope.main_branch,
        policy=scope.policy,
    )
    status = None
    if result.verdict is not None and result.pull is not None:
        status = StatusDecision(result.pull.head_sha, reuse_status(result.verdict))
    word = VERDICT_WORDS[result.reaction]
    summary = f"### /reuse-sweep-run {word}\n\n{text(result.reason)}\n"
    return CommentOutcome(
        Decision(result.reaction, None, status), summary, (f"{word}: {result.reason}",)
    )


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")

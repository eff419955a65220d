"""`infx reuse status`: re-decide the standing requests of open PRs after a push to main,
whose changes may change what merging each PR would measure.

Pure rules over each PR's facts read beforehand (`infx.reuse.facts.pull_facts`) and what
merging it now gives (`infx.reuse.preview`); the edge (`infx.reuse.edge.restatus`) reads
PR by PR and sets each status.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from infx.github.client import Pull
from infx.markdown import text
from infx.reuse.handoff import StatusDecision
from infx.reuse.measured import Merging, Scope, reuse_status, verdict
from infx.reuse.source import PullFacts, Request, SourceFacts, newest_request
from infx.sweep.labels import PRIMARY


@dataclass(frozen=True)
class PullStatus:
    """One PR's re-decided status and the step summary's line about it."""

    status: StatusDecision
    summary: str  # Markdown, data escaped


def asking_pulls(pulls: Iterable[Pull], repo: str) -> list[Pull]:
    """The open PRs worth re-deciding. A PR with no primary sweep label never ran a sweep
    its labels asked for; a fork's PR is never reused. Neither costs a request more."""
    return [p for p in pulls if p.head_repo == repo and any(label in PRIMARY for label in p.labels)]


@dataclass(frozen=True)
class Standing:
    """A PR with an authorized request and the runs read for it."""

    pull: Pull
    request: Request
    source: SourceFacts


def standing(facts: PullFacts) -> Standing | None:
    """The PR's authorized request with its runs (None: nobody authorized asked)."""
    request = newest_request(facts.comments, facts.permissions)
    if request is None or facts.source is None:
        return None
    return Standing(facts.pull, request, facts.source)


def pull_status(asked: Standing, merging: Merging, scope: Scope) -> PullStatus:
    """The status the PR head carries for its request, as merging the PR now would find it."""
    found = verdict(
        asked.pull,
        asked.request,
        asked.source,
        merging,
        repo=scope.repo,
        workflow=scope.workflow,
        main_branch=scope.main_branch,
        require_merged=False,
        policy=scope.policy,
    )
    summary = f"- PR #{asked.pull.number}: {text(found.reason)}\n"
    return PullStatus(StatusDecision(asked.pull.head_sha, reuse_status(found)), summary)

"""The sweep workflow's reuse gate: whether this run skips the PR sweep (a PR event) or
republishes a PR's sweep as main's (the push of its merge).

Pure rules over the PRs read beforehand (`infx.reuse.facts.gate_facts`) and what the
run's checkout says (`infx.reuse.preview.local`).
"""

from __future__ import annotations

from dataclasses import dataclass

from infx.errors import ReuseError
from infx.github.client import Pull
from infx.markdown import text
from infx.matrix.manifest import digest
from infx.reuse.handoff import StatusDecision
from infx.reuse.measured import Merging, Policy, Scope, Verdict, reuse_status, verdict
from infx.reuse.receipt import MergeFacts
from infx.reuse.source import PullFacts, newest_request


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
    policy: Policy | None = None,
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
        policy=policy,
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
class GateOutcome:
    """`infx reuse gate`'s answer: its step outputs, the step summary, on a PR event with a
    verdict the status the PR head carries (set with --status), and for a push that reuses
    the facts of its merge receipt (the check runs and approvals still to be read)."""

    outputs: dict[str, str]
    summary: str
    status: StatusDecision | None = None
    merge: MergeFacts | None = None


def merge_facts(event: GateEvent, facts: PullFacts, found: Verdict, repo: str) -> MergeFacts:
    """What the merge receipt of a reusing push says, from what the decision read."""
    run, source = found.run, facts.source
    assert run is not None and source is not None and source.manifest
    request = newest_request(facts.comments, facts.permissions)
    comment = request.comment if request else None
    pinned = request.command.run_id if request else None
    return MergeFacts(
        repository=repo,
        commit=event.commit_sha,
        before=event.before or "",
        pr=facts.pull.number,
        run_id=None,
        source_run=run.id,
        source_attempt=run.run_attempt,
        source_head=run.head_sha,
        source_url=run.html_url,
        source_conclusion=run.conclusion,
        manifest_digest=str(source.manifest["digest"]),
        receipt_sha=digest(source.receipt) if source.receipt is not None else None,
        reason=found.reason,
        comment=comment.id if comment else None,
        author=comment.author if comment else None,
        permission=facts.permissions.get(comment.author) if comment else None,
        command="/reuse-sweep-run" + (f" {pinned}" if pinned else ""),
        asked_at=comment.created_at.strftime("%Y-%m-%dT%H:%M:%SZ") if comment else None,
        checks=(),
        approvals=(),
    )


def gate(event: GateEvent, pulls: tuple[PullFacts, ...], local: Local, scope: Scope) -> GateOutcome:
    """The sweep run's reuse decision as outputs, summary and status."""
    result = decide_gate(
        event,
        pulls,
        local,
        repo=scope.repo,
        workflow=scope.workflow,
        main_branch=scope.main_branch,
        policy=scope.policy,
    )
    status = merge = None
    if event.name == "pull_request" and result.verdict is not None:
        status = StatusDecision(event.commit_sha, reuse_status(result.verdict))
    if result.reuse_enabled and result.verdict is not None:
        merge = merge_facts(event, pulls[0], result.verdict, scope.repo)
    summary = f"### Sweep reuse\n\n{text(result.reason)}\n"
    return GateOutcome(result.outputs(), summary, status, merge)


def gate_failed(error: Exception) -> dict[str, str]:
    """The outputs of a gate that failed: reuse off, with the reason, so the sweep runs."""
    return GateResult(reason=f"no reuse: {error}").outputs()


def needs_merging(pulls: tuple[PullFacts, ...]) -> bool:
    """Whether the decision compares a source run with what merges (someone asked)."""
    return any(p.source is not None for p in pulls)

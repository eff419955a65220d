"""The merge helper's pure rules: whether it may touch a PR, whether the PR's sweep is
reusable for what merges, and whether the pushed head's checks let it merge.

The helper (`infx.merge.helper`) reads, pushes and merges; each of its steps asks one of
these first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infx.errors import MergeError
from infx.github.client import Pull, Status
from infx.reuse.commands import ReuseCommand
from infx.reuse.measured import STATUS_CONTEXT, Merging, Scope, Verdict, verdict
from infx.reuse.source import PullFacts, Request, newest_request
from infx.settings import SWEEP_WORKFLOW
from infx.sweep.labels import sweep_label_problem

GATE_CHECK = "check-changelog"
OK_CONCLUSIONS = ("success", "skipped", "neutral")
# The helper's own bare /reuse-sweep-run, standing in while no authorized request exists.
BARE_REQUEST = Request(comment=None, command=ReuseCommand(None))
# A check run as the API lists it: (name, status, conclusion).
CheckRun = tuple[str, str, str | None]


@dataclass(frozen=True)
class MergeOptions:
    """What the maintainer chose on the command line."""

    method: str = "squash"
    dry_run: bool = False
    remote: str = "origin"
    workflow: str = SWEEP_WORKFLOW
    timeout: float = 6 * 3600
    poll: float = 30


@dataclass(frozen=True)
class Checks:
    """Where the pushed head's checks stand: `passed` says so when the PR may merge, else
    `waiting` names what is still awaited."""

    passed: str | None
    waiting: tuple[str, ...] = ()


def preflight(pull: Pull, repo: str, main_branch: str = "main") -> str | None:
    """Why the helper must not touch this PR (None: it may): closed, from a fork, not into
    main, or labelled for anything but one reusable full sweep."""
    if pull.state != "open":
        return f"PR #{pull.number} is {pull.state}"
    if pull.head_repo != repo:
        return f"PR #{pull.number} comes from a fork; its branch cannot be updated here"
    if pull.base_ref != main_branch:
        return f"PR #{pull.number} merges into {pull.base_ref}, not {main_branch}"
    return sweep_label_problem(pull.number, pull.labels, reuse=True)


def reusable(
    pull: Pull, facts: PullFacts, merging: Merging, scope: Scope
) -> tuple[Request | None, Verdict]:
    """Any authorized request, and whether it (or, without one, the helper's own bare
    request) names a source run that measured what merges."""
    if facts.source is None:
        raise MergeError(f"PR #{pull.number}'s runs were not read")
    existing = newest_request(facts.comments, facts.permissions)
    found = verdict(
        pull,
        existing or BARE_REQUEST,
        facts.source,
        merging,
        repo=scope.repo,
        workflow=scope.workflow,
        main_branch=scope.main_branch,
        policy=scope.policy,
        require_merged=False,
    )
    return existing, found


def request_note(existing: Request) -> str:
    """What the helper says instead of posting a second request."""
    pinned = existing.command.run_id
    return (
        f"an authorized request exists ({'pinned to run ' + str(pinned) if pinned else 'unpinned'}); "
        "not posting another"
    )


def failed_checks(checks: Sequence[CheckRun], sha: str) -> str | None:
    """Why the head cannot merge whatever else happens (None: no check failed)."""
    failed = [
        name
        for name, status, conclusion in checks
        if status == "completed" and conclusion not in OK_CONCLUSIONS
    ]
    return f"checks failed on {sha[:12]}: {', '.join(sorted(failed))}" if failed else None


def checks_state(checks: Sequence[CheckRun], reuse: Status | None, sha: str) -> Checks:
    """Whether every check passed, the changelog gate among them, and the infx/reuse status
    `reuse` says ready; a status that says not ready stops the helper with its reason."""
    if reuse is not None and reuse.state not in ("pending", "success"):
        raise MergeError(f"{STATUS_CONTEXT} on {sha[:12]}: {reuse.description}")
    ready = reuse is not None and reuse.state == "success"
    gate = [c for c in checks if c[0] == GATE_CHECK]
    pending = [name for name, status, _ in checks if status != "completed"]
    if gate and not pending and ready:
        return Checks(
            f"all {len(checks)} checks passed and {STATUS_CONTEXT} says ready on {sha[:12]}"
        )
    return Checks(None, tuple(pending or ([] if gate else [GATE_CHECK]) or [STATUS_CONTEXT]))

"""The edge of the comment commands, the gate and `reuse status`: the checkout and client
they run with, the reads each decision needs (GitHub through `facts`, git through
`preview`), and the writes that carry a decision out (dispatch, reaction, commit status).

The decisions themselves are pure (`ack`, `gate`, `stage`, `status`, `handoff`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from infx import git
from infx.context import repo_slug
from infx.errors import InfxError, printable
from infx.github.actions import CommentEvent, append_summary, event, set_outputs
from infx.github.client import GitHub, Status
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.reuse.ack import ack
from infx.reuse.facts import Roles, ack_reads, gate_facts, pull_facts, stage_facts
from infx.reuse.gate import GateEvent, GateOutcome, Local, gate, gate_failed, needs_merging
from infx.reuse.handoff import (
    CommentOutcome,
    Decision,
    StatusDecision,
    head_moved,
    received_comment,
    status_update,
)
from infx.reuse.measured import STATUS_CONTEXT, Merging, Policy, Scope
from infx.reuse.receipt import MergeFacts, merge_receipt
from infx.reuse.source import PullFacts
from infx.reuse.stage import StageFacts, stage
from infx.reuse.status import PullStatus, asking_pulls, pull_status, standing
from infx.settings import SWEEP_WORKFLOW, Settings
from infx.settings import load as load_settings

NOT_NEEDED = Merging(None, "not needed")


@dataclass(frozen=True)
class Checkout:
    """The checkout a command runs in, its settings, the API client, and the same client
    reading labels as roles (settings' [labels] renames)."""

    root: Path
    settings: Settings
    gh: GitHub
    reader: Roles

    @classmethod
    def open(cls, repo: str | None) -> Checkout:
        root = git.root()
        settings = load_settings(root)
        gh = GitHub(repo_slug(repo, root))
        return cls(root, settings, gh, Roles(gh, settings.labels, settings.main_branch))

    def scope(self, workflow: str) -> Scope:
        reuse = self.settings.reuse
        policy = Policy(reuse.moving_tags)
        return Scope(self.gh.slug, workflow, self.settings.main_branch, policy)

    def merging_of(
        self, remote: str, head_sha: str, facts: PullFacts | None = None, workflow: str = ""
    ) -> Merging:
        """What merging the PR head into main now would sweep, and what git says the PR's
        source run (and its lineage) ran, derived against the same main."""
        from infx.reuse.preview import merging_of_head

        merging = merging_of_head(
            self.root, self.settings, remote, head_sha, workflow or SWEEP_WORKFLOW
        )
        if facts is None:
            return merging
        return self.derived(merging, (facts,), workflow, remote)

    def derived(
        self, merging: Merging, pulls: tuple[PullFacts, ...], workflow: str, remote: str = "origin"
    ) -> Merging:
        from infx.reuse.preview import with_derived

        slug = self.gh.slug
        return with_derived(self.root, self.settings, merging, pulls, workflow, slug, remote)

    def ack(self, received: CommentEvent, workflow: str, remote: str) -> CommentOutcome:
        """`reuse ack`'s decision as one metered decision: it reads the API only as far as
        it goes, and what merging the PR now would sweep only for a request it judges."""

        def merging(facts: PullFacts) -> Merging:
            return self.merging_of(remote, facts.pull.head_sha, facts, workflow)

        reads = ack_reads(self.reader, received, workflow, merging)
        return self.gh.decide(lambda: ack(received, reads, self.scope(workflow)))

    def gate_facts(self, asked: GateEvent, workflow: str) -> tuple[tuple[PullFacts, ...], Local]:
        """The PRs the gate looks at and what the run's checkout says (read only when some
        PR asks)."""
        from infx.reuse.preview import local

        main = self.settings.main_branch
        pulls = self.gh.decide(lambda: gate_facts(self.reader, asked, workflow, main))
        if not needs_merging(pulls):
            return pulls, Local(None, NOT_NEEDED)
        found = local(self.root, self.settings, asked, workflow)
        return pulls, replace(found, merging=self.derived(found.merging, pulls, workflow))

    def merge_receipt(self, merge: MergeFacts) -> dict[str, Any]:
        """The merge receipt of a reusing push: the decision's facts, the check runs on the
        source run's commit (the `infx/results` verdict that gated the PR) and the source
        run's environment approvals (its GPU budget), read now."""
        source = merge.source_run
        checks, approvals = self.gh.decide(
            lambda: (self.gh.check_runs(merge.source_head), self.gh.run_approvals(source))
        )
        run_id = os.environ.get("GITHUB_RUN_ID", "")
        return merge_receipt(
            replace(
                merge,
                checks=tuple(checks),
                approvals=tuple(approvals),
                run_id=decimal(run_id, below=SQLITE_INTEGER_END),  # the history stores it
            )
        )

    def seal_merge(self, merge: MergeFacts, target: Path) -> str:
        """Write the merge receipt of a reusing push to `target`; the line saying so."""
        from infx.matrix.manifest import canonical
        from infx.yamlio import atomic_write

        # Canonical bytes: their sha256 is the receipt's digest, which the issuer's receipt
        # of this run seals and the history can recompute from what it stores.
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, canonical(self.merge_receipt(merge)))
        return f"merge receipt: {target}"

    def stage_facts(self, received: CommentEvent, workflow: str) -> StageFacts | None:
        return self.gh.decide(lambda: stage_facts(self.reader, received, workflow))

    def stage(self, received: CommentEvent, workflow: str) -> CommentOutcome:
        """`stage-results`' decision on what its metered reads found."""
        return stage(received, self.stage_facts(received, workflow), workflow, self.gh.slug)


def gated(
    repo: str | None, asked: GateEvent, workflow: str, receipt: Path | None
) -> tuple[Checkout, GateOutcome, str | None]:
    """`reuse gate`: the decision, and for a push that reuses the merge receipt written to
    `receipt` (no receipt, no reuse: a merge whose provenance cannot be sealed sweeps
    instead) with the line saying so. Any failure (API error, an answer of the wrong shape,
    a cap reached) still writes the step outputs, reuse off with the reason, then raises."""
    try:
        checkout = Checkout.open(repo)
        found = gate(asked, *checkout.gate_facts(asked, workflow), checkout.scope(workflow))
        sealed = None
        if receipt is not None and found.merge is not None:
            sealed = checkout.seal_merge(found.merge, receipt)
    except (InfxError, OSError) as exc:
        set_outputs(gate_failed(exc))
        raise
    return checkout, found, sealed


def _run_url(gh: GitHub) -> str | None:
    run_id = os.environ.get("GITHUB_RUN_ID")
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    return f"{server}/{gh.slug}/actions/runs/{run_id}" if run_id else None


def reuse_status_of(gh: GitHub, sha: str) -> Status | None:
    """The infx/reuse status a commit carries now, if any."""
    return next((s for s in gh.statuses(sha) if s.context == STATUS_CONTEXT), None)


def set_reuse_status(gh: GitHub, decided: StatusDecision) -> str:
    """Set the status unless the head already carries exactly it; say what happened."""
    needed, line = status_update(decided, reuse_status_of(gh, decided.sha))
    if needed:
        gh.set_status(decided.sha, decided.status, _run_url(gh))
    return line


def try_reuse_status(gh: GitHub, decided: StatusDecision) -> str:
    """Set the status as `set_reuse_status` does; a failure is a warning, not the gate's."""
    try:
        return set_reuse_status(gh, decided)
    except InfxError as exc:
        return printable(f"infx: warning: {STATUS_CONTEXT} not set: {exc}")  # quotes an answer


def carry_out(
    gh: GitHub, received: CommentEvent, decided: Decision, *, handed_on: bool = False
) -> Iterator[str]:
    """Dispatch, react to the event's own comment, set the status, in that order, saying
    what is worth saying as it goes. A decision handed on by another job (`handed_on`)
    says each step, and sets the status only while its commit is still the PR's head."""
    if decided.dispatch is not None:
        gh.dispatch(decided.dispatch.event_type, dict(decided.dispatch.payload))
        if handed_on:
            yield f"dispatched {decided.dispatch.event_type} for PR #{received.issue_number}"
    if decided.reaction:
        bot = os.environ.get("INFX_BOT_LOGIN", "github-actions[bot]")
        gh.react(received.comment_id, decided.reaction, bot)
        if handed_on:
            yield f"reacted {decided.reaction} to comment {received.comment_id}"
    if decided.status is not None:
        moved = None
        if handed_on:
            head = gh.pull(received.issue_number).head_sha
            moved = head_moved(decided.status, head, received.issue_number)
        yield moved or set_reuse_status(gh, decided.status)


def answer(
    gh: GitHub, received: CommentEvent, found: CommentOutcome, decide_only: bool
) -> Iterator[str]:
    """Hand a comment command's decision on (`decide_only`: as step outputs for `infx
    apply-decision`) or carry it out; then summarize; yields the lines to print."""
    if decide_only:
        set_outputs(found.decision.outputs())
    else:
        yield from carry_out(gh, received, found.decision)
    append_summary(found.summary)
    yield from found.lines


def answered(
    repo: str | None,
    decide_only: bool,
    actions: tuple[str, ...],
    decide: Callable[[Checkout, CommentEvent], CommentOutcome],
) -> Iterator[str]:
    """Unless the comment event is none of the command's business, decide in a checkout and
    carry the answer out (or, with --decide-only, hand it on as step outputs); yields the
    lines to print."""
    received, ignored = received_comment(*event(), actions)
    if received is None:
        yield ignored
        return
    checkout = Checkout.open(repo)
    yield from answer(checkout.gh, received, decide(checkout, received), decide_only)


def restatus(
    checkout: Checkout, numbers: tuple[int, ...], scope: Scope, remote: str, max_prs: int
) -> Iterator[tuple[str, PullStatus | None]]:
    """Re-decide and set the infx/reuse status of the PRs `numbers` (default: every open PR
    into main that may ask), at most `max_prs` of those asking; yields a line per PR and
    its re-decided status (None: it does not ask)."""
    reader = checkout.reader
    if numbers:
        pulls = [reader.pull(n) for n in numbers]
    else:
        pulls = asking_pulls(reader.open_pulls(scope.main_branch), scope.repo)
    asked = 0
    for pull in pulls:
        if asked == max_prs:
            yield f"stopped after {max_prs} PR(s) asking for reuse", None
            return
        facts = checkout.gh.decide(partial(pull_facts, reader, pull, scope.workflow))
        found = standing(facts)
        if found is None:
            yield f"PR #{pull.number}: no authorized /reuse-sweep-run", None
            continue
        asked += 1
        merging = checkout.merging_of(remote, pull.head_sha, facts, scope.workflow)
        decided = pull_status(found, merging, scope)
        yield f"PR #{pull.number}: {set_reuse_status(checkout.gh, decided.status)}", decided

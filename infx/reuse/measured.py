"""Whether a source run measured what merges: the rule reuse follows.

The rule is one sentence: what merges is what was measured. The run's own manifest,
written by its planning job, must equal the manifest of what merges (`infx.reuse.preview`)
field for field (options, plan, configs as parsed, runner labels, recipe and template
bytes). Fail closed: every doubt ends in "no reuse" with a reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infx.github.client import Pull, Run, Status
from infx.matrix.manifest import ARTIFACT as MANIFEST_ARTIFACT
from infx.matrix.manifest import differences, evaluated, summarize
from infx.reuse.source import (
    EVALS_ARTIFACT,
    REPUBLISHED,
    RESULTS_ARTIFACT,
    Candidate,
    Request,
    SourceFacts,
    ambiguous,
    check_run,
    empty,
    pick_run,
    unexpired,
)
from infx.sweep.labels import sweep_label_problem

STATUS_CONTEXT = "infx/reuse"
# GitHub refuses a commit status description longer than this.
STATUS_LENGTH = 140


@dataclass(frozen=True)
class Scope:
    """Where a reuse decision looks: this repository, the sweep workflow's file name, and
    the branch PRs merge into."""

    repo: str
    workflow: str
    main_branch: str = "main"


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
    unusable = check_run(root, facts.commits, workflow, True, repo)
    return f"run {run.id}'s original run: {unusable}" if unusable else None


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
    problem = lineage_problem(chosen.run, facts, pull, workflow, repo) or measured_problem(
        chosen, facts, merging
    )
    if problem:
        return Verdict(False, problem, pull=pull)
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

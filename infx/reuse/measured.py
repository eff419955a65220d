"""Whether a source run measured what merges: the rule reuse follows.

The rule is one sentence: what merges is what was measured. What a run measured is derived,
not trusted: its manifest is computed again from git at the commit GitHub says it ran
(`head_sha`), merged into main as what merges is, with the workflow files that ran and
infx's own code among its inputs (`infx.reuse.preview.derive`). That derived manifest must
equal the manifest of what merges field for field (options, plan, configs as parsed, runner
labels, every input's bytes); the manifest the run uploaded is only a cross-check, and any
difference refuses, naming the field. A rerun's lineage is derived run by run: every run
whose results it carries must have run the code that merges. Fail closed: every doubt ends
in "no reuse" with a reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infx.github.client import Pull, Run, Status
from infx.matrix.manifest import ARTIFACT as MANIFEST_ARTIFACT
from infx.matrix.manifest import differences, evaluated, summarize
from infx.reuse.images import digest_problem, moving_problem
from infx.reuse.issuer import vouched_problem
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
class Policy:
    """The settings' `[reuse]` table: `moving_tags` ("record": a moving image tag is reused
    when every job recorded one digest for it; "refuse": never)."""

    moving_tags: str = "record"


@dataclass(frozen=True)
class Scope:
    """Where a reuse decision looks: this repository, the sweep workflow's file name, the
    branch PRs merge into, and the settings' reuse policy."""

    repo: str
    workflow: str
    main_branch: str = "main"
    policy: Policy = field(default_factory=Policy)


@dataclass(frozen=True)
class Derived:
    """What git says a source run ran: the manifest of the commit it checked out (the merge
    commit GitHub vouched for, else its commit merged into main as what merges is; None:
    only its code was derived, or it could not be, `problem` says why), and the digests of
    its code (the workflow that ran, what it calls, infx's own code). A dispatched rerun
    runs the workflow files of the branch it was dispatched on, not of a merge: `own_code`
    is the code at its own commit."""

    manifest: Mapping[str, Any] | None
    code: Mapping[str, str | None]
    problem: str = ""
    own_code: Mapping[str, str | None] | None = None


@dataclass(frozen=True)
class Merging:
    """What merges, as a reuse decision sees it: its manifest (or why it has none), the
    digests of the code that would run it, the main commit it merges into, and what git
    says each source run ran (run id -> Derived)."""

    manifest: Mapping[str, Any] | None
    problem: str = ""
    code: Mapping[str, str | None] = field(default_factory=dict)
    main: str = ""
    derived: Mapping[int, Derived] = field(default_factory=dict)


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
    if unusable:
        return f"run {run.id}'s original run: {unusable}"
    for member in found.members:
        unusable = check_run(member, facts.commits, workflow, True, repo)
        if unusable:
            return f"run {run.id}'s lineage: {unusable}"
    return None


def lineage_code_problem(
    run: Run, facts: SourceFacts, merging: Merging, pull: Pull, main_branch: str = "main"
) -> str | None:
    """Why a rerun's lineage carries results written by other code than what merges (None:
    every run of it ran the code that merges): its collect job merges its sources' tables,
    so each one needs the issuer's receipt saying it ran for this PR against main, and is
    derived from git, not only the rerun."""
    if run.event != "workflow_dispatch" or facts.lineage is None:
        return None
    for member in facts.lineage.members:
        why = issued_problem(member, facts, pull, main_branch) or derived_problem(
            member, merging, full=False
        )
        if why:
            return f"run {run.id}'s lineage: {why}"
    return None


def measured_problem(
    chosen: Candidate,
    facts: SourceFacts,
    merging: Merging,
    pull: Pull,
    policy: Policy | None = None,
    main_branch: str = "main",
) -> str | None:
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
    if sweep.get("unrecorded"):
        return f"run {run.id} recorded itself as not reusable: {sweep['unrecorded'][0]}"
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
    return (
        receipt_problem(chosen, facts, record, merging, policy or Policy(), pull, main_branch)
        or derived_problem(run, merging, full=True)
        or cross_check(run, record, merging)
    )


def issued_problem(run: Run, facts: SourceFacts, pull: Pull, main_branch: str) -> str | None:
    """Why no receipt of the issuer vouches for `run` as a run of `pull` against the main
    branch (None: one does; `vouched_problem`)."""
    return vouched_problem(facts.issued.get(run.id), run, pull, main_branch)


def sealed_problem(chosen: Candidate, sealed: Mapping[str, Any]) -> str | None:
    """Why what republish would copy is not what the issuer sealed (None: it is): every
    artifact of the names republish copies is sealed, and its archive is the one GitHub
    lists now (the listing's digest of the zip)."""
    run = chosen.run
    for name in REPUBLISHED:
        found = unexpired(chosen.artifacts, name)
        if found is None:
            continue
        sealed_zip = (sealed.get("archives") or {}).get(name)
        if sealed_zip is None or name not in sealed["artifacts"]:
            return (
                f"run {run.id}'s {name} is not sealed by its receipt, so what it holds is unknown"
            )
        if found.digest != sealed_zip:
            return (
                f"run {run.id}'s {name} is not the archive its receipt sealed "
                f"({found.digest or 'GitHub lists no digest'})"
            )
    return None


def receipt_problem(
    chosen: Candidate,
    facts: SourceFacts,
    record: Mapping[str, Any],
    merging: Merging,
    policy: Policy,
    pull: Pull,
    main_branch: str,
) -> str | None:
    """Why the issuer's receipt does not vouch for what the run published (None: it does):
    it is this run's, for this PR against main, it seals this manifest and every artifact
    republish copies as GitHub lists them now, every job with results recorded the digest of
    the image it pulled and jobs of one tag agree; with moving-tags "refuse", no selected
    config uses a moving tag."""
    run = chosen.run
    why = issued_problem(run, facts, pull, main_branch)
    if why:
        return why
    sealed = facts.issued[run.id].receipt
    assert sealed is not None
    if (sealed["manifest"] or {}).get("digest") != record["digest"]:
        return f"run {run.id}'s receipt seals another manifest than the one it uploaded"
    why = sealed_problem(chosen, sealed)
    if why:
        return why
    configs = (merging.manifest or {}).get("measured", {}).get("configs", {})
    return moving_problem(configs, policy.moving_tags) or digest_problem(sealed["images"], run.id)


def derived_problem(run: Run, merging: Merging, *, full: bool) -> str | None:
    """Why git does not back what `run` says it measured (None: it does). Its code (the
    workflow that ran and what it calls, infx's code where it lives here) must be the code
    that merges; with `full`, the whole manifest its commit gives must equal what merges,
    and the manifest it uploaded must equal that one."""
    derived = merging.derived.get(run.id)
    at = f"commit {run.head_sha[:12]}"
    if derived is None:
        return f"run {run.id}: what its {at} ran was not derived from git"
    if derived.problem:
        return f"run {run.id}: what its {at} ran cannot be derived from git: {derived.problem}"
    for code, where in (
        (derived.code, at),
        (derived.own_code, f"branch commit {run.head_sha[:12]}"),
    ):
        if code is None:
            continue
        names = sorted(set(code) | set(merging.code))
        other = [name for name in names if code.get(name) != merging.code.get(name)]
        if other:
            shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
            return (
                f"run {run.id} ran other code than what merges: {shown} at its {where} "
                "(the workflow that wrote its results is not the one that merges)"
            )
    if not full:
        return None
    if derived.manifest is None or merging.manifest is None:
        return f"run {run.id}: the manifest of its {at} was not derived"
    found = differences(derived.manifest, merging.manifest)
    if found:
        return f"run {run.id}'s {at} does not hold what merges: {summarize(found)}"
    return None


def cross_check(run: Run, uploaded: Mapping[str, Any], merging: Merging) -> str | None:
    """The uploaded manifest against the one derived from git: any difference refuses."""
    derived = merging.derived.get(run.id)
    if derived is None or derived.manifest is None:
        return None  # derived_problem has said why
    found = differences(uploaded, derived.manifest)
    if found:
        return (
            f"run {run.id}'s uploaded {MANIFEST_ARTIFACT} differs from the one derived from its "
            f"commit {run.head_sha[:12]}: {summarize(found)}"
        )
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
    policy: Policy | None = None,
) -> Verdict:
    """Whether `request` on `pull` names a source run that measured what merges."""
    problem = pull_problem(pull, repo, main_branch, require_merged)
    if problem:
        return Verdict(False, problem, pull=pull)
    chosen, why = pick_run(request, facts, workflow, pull.number, repo)
    if chosen is None:
        return Verdict(False, why, pull=pull)
    problem = (
        lineage_problem(chosen.run, facts, pull, workflow, repo)
        or measured_problem(chosen, facts, merging, pull, policy, main_branch)
        or lineage_code_problem(chosen.run, facts, merging, pull, main_branch)
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

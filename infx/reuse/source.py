"""Who asked for reuse and which run they asked for.

Pure rules over facts read beforehand (`infx.reuse.facts`): the newest authorized
/reuse-sweep-run on a PR, and the source run it names (pinned) or finds (the newest
usable one). Fail closed: every doubt ends in "no reuse" with a reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infx.github.client import Artifact, Comment, Pull, Run
from infx.github.permissions import PREFILTER_ASSOCIATIONS, WRITE_PERMISSIONS
from infx.matrix.manifest import ARTIFACT as MANIFEST_ARTIFACT
from infx.reuse.commands import ReuseCommand, reuse_command

if TYPE_CHECKING:
    from infx.reuse.issuer import Issued

RESULTS_ARTIFACT = "results_bmk"
EVALS_ARTIFACT = "eval_results_all"
# Uploaded once per sweep run, so one listing of each finds every run with results.
AGGREGATE_ARTIFACTS = (RESULTS_ARTIFACT, EVALS_ARTIFACT)
# What republish downloads by name from the source run and uploads as this run's. The
# run's own receipt is not among them: it is the run's claim; the issuer's receipt vouches.
REPUBLISHED = (*AGGREGATE_ARTIFACTS, "changelog-metadata", MANIFEST_ARTIFACT)
# A zip archive holding no file at all is this many bytes (its end record alone).
EMPTY_ARCHIVE = 22
# Runs read per unpinned search: a PR with more failed runs carrying results pins one.
MAX_CANDIDATES = 10
# A PR's own sweep, or a rerun of what it left without results (`infx sweep rerun`).
SOURCE_EVENTS = ("pull_request", "workflow_dispatch")


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
    the lineage's original run, read from its sweep-plan's rerun record; `members` are every
    earlier run whose results the lineage carries (its sources back to the original)."""

    pr: int | None
    root: Run | None
    problem: str = ""
    members: tuple[Run, ...] = ()


@dataclass(frozen=True)
class SourceFacts:
    """What the API said about a PR's possible source runs and the chosen run's record."""

    commits: frozenset[str]
    candidates: tuple[Candidate, ...]  # pinned: the pinned run if it exists
    exhausted: bool  # more candidates existed than MAX_CANDIDATES
    manifest: Mapping[str, Any] | None = None  # the chosen run's sweep manifest, when read
    manifest_problem: str = ""  # why it was not read
    lineage: Lineage | None = None  # read when the chosen run is a rerun (workflow_dispatch)
    # The issuer's receipts of the chosen run and of every run of its lineage, by run id.
    issued: Mapping[int, Issued] = field(default_factory=dict)

    @property
    def receipt(self) -> Mapping[str, Any] | None:
        """The chosen run's issued receipt, when read."""
        chosen = next(iter(self.issued.values()), None)
        return chosen.receipt if chosen is not None else None


@dataclass(frozen=True)
class PullFacts:
    """One PR: its comments, the permissions of those asking for reuse, its source runs."""

    pull: Pull
    comments: tuple[Comment, ...]
    permissions: Mapping[str, str]
    source: SourceFacts | None = None  # None: nobody asked, nothing more was read


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
        if found[0].run.conclusion != "success":
            # Main's own sweep is stored only when no job failed (an eval below its accuracy
            # floor fails its job): a pinned run that failed would publish what main's
            # would never have.
            return None, (
                f"run {pinned} concluded {found[0].run.conclusion}: reuse publishes only a "
                "sweep whose every job passed, as main's own results are stored"
            )
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

"""The GitHub edge of the reuse and stage decisions: read what they need, decide nothing.

Each fetcher reads a typed snapshot through a `Reader` (the GitHub client, or anything
with its methods) and stops reading where the pure rules (`source`, `gate`, `ack`,
`stage`) would stop looking, using those same rules to know where that is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from infx.errors import GitHubError, UsageError
from infx.github.actions import CommentEvent
from infx.github.client import Artifact, Comment, LabelEvent, Pull, Run
from infx.github.permissions import PREFILTER_ASSOCIATIONS, WRITE_PERMISSIONS
from infx.matrix.manifest import ARTIFACT as MANIFEST_ARTIFACT
from infx.matrix.manifest import FILE as MANIFEST_FILE
from infx.matrix.manifest import FORMAT as MANIFEST_FORMAT
from infx.reuse.ack import AckReads
from infx.reuse.commands import stage_command
from infx.reuse.gate import GateEvent, gate_needs_nothing
from infx.reuse.issue_facts import read_issued
from infx.reuse.issuer import Issued
from infx.reuse.measured import Merging
from infx.reuse.source import (
    AGGREGATE_ARTIFACTS,
    MAX_CANDIDATES,
    REPUBLISHED,
    Candidate,
    Lineage,
    PullFacts,
    Request,
    SourceFacts,
    ambiguous,
    asking,
    newest_request,
    pick_run,
    unexpired,
    usable,
)
from infx.reuse.stage import (
    METADATA_ARTIFACT,
    StageFacts,
    chosen_run,
    stage_ignores,
    stage_refusal,
    stageable,
)
from infx.sweep.labels import canonical_labels


class Reader(Protocol):
    """The GitHub reads the decisions need (infx.github.client.GitHub provides them)."""

    @property
    def slug(self) -> str: ...

    def pull(self, number: int) -> Pull: ...
    def open_pulls(self, base: str) -> list[Pull]: ...
    def pulls_for_commit(self, sha: str) -> list[Pull]: ...
    def pull_commits(self, number: int) -> list[str]: ...
    def comments(self, number: int) -> list[Comment]: ...
    def comment(self, comment_id: int) -> Comment: ...
    def permission(self, login: str) -> str: ...
    def run(self, run_id: int) -> Run: ...
    def recent_runs(self, workflow: str, branch: str) -> list[Run]: ...
    def artifacts(self, run_id: int) -> list[Artifact]: ...
    def run_artifacts_page(self, run_id: int) -> tuple[list[Artifact], bool]: ...
    def run_artifacts_named(self, run_id: int, name: str) -> list[Artifact]: ...
    def artifacts_since(self, name: str, since: datetime) -> list[Artifact]: ...
    def label_events(self, number: int) -> list[LabelEvent]: ...
    def artifact_member(self, artifact_id: int, member: str, max_bytes: int) -> bytes: ...
    def runs_since(
        self, workflow: str, event: str, since: datetime, branch: str | None = None
    ) -> Iterator[Run]: ...
    def on_branch(self, sha: str, branch: str) -> bool: ...


# A manifest holds the selected configs as parsed: an entry selecting every InferenceX
# config makes about 1 MB.
MAX_MANIFEST_BYTES = 32 << 20


class Roles:
    """A Reader whose PR labels and label events read as the roles infx knows, through the
    repository's `[labels]` renames, so every command applies one label policy."""

    def __init__(
        self, reader: Reader, renamed: Mapping[str, str], main_branch: str = "main"
    ) -> None:
        self._reader = reader
        self._renamed = dict(renamed)
        self.main_branch = main_branch  # where the issuer of run receipts runs

    @property
    def slug(self) -> str:
        return self._reader.slug

    def runs_since(
        self, workflow: str, event: str, since: datetime, branch: str | None = None
    ) -> Iterator[Run]:
        return self._reader.runs_since(workflow, event, since, branch)

    def on_branch(self, sha: str, branch: str) -> bool:
        return self._reader.on_branch(sha, branch)

    def pull_commits(self, number: int) -> list[str]:
        return self._reader.pull_commits(number)

    def comments(self, number: int) -> list[Comment]:
        return self._reader.comments(number)

    def comment(self, comment_id: int) -> Comment:
        return self._reader.comment(comment_id)

    def permission(self, login: str) -> str:
        return self._reader.permission(login)

    def run(self, run_id: int) -> Run:
        return self._reader.run(run_id)

    def recent_runs(self, workflow: str, branch: str) -> list[Run]:
        return self._reader.recent_runs(workflow, branch)

    def artifacts(self, run_id: int) -> list[Artifact]:
        return self._reader.artifacts(run_id)

    def run_artifacts_page(self, run_id: int) -> tuple[list[Artifact], bool]:
        return self._reader.run_artifacts_page(run_id)

    def run_artifacts_named(self, run_id: int, name: str) -> list[Artifact]:
        return self._reader.run_artifacts_named(run_id, name)

    def artifacts_since(self, name: str, since: datetime) -> list[Artifact]:
        return self._reader.artifacts_since(name, since)

    def artifact_member(self, artifact_id: int, member: str, max_bytes: int) -> bytes:
        return self._reader.artifact_member(artifact_id, member, max_bytes)

    def _pull(self, pull: Pull) -> Pull:
        return replace(pull, labels=tuple(canonical_labels(list(pull.labels), self._renamed)))

    def pull(self, number: int) -> Pull:
        return self._pull(self._reader.pull(number))

    def pulls_for_commit(self, sha: str) -> list[Pull]:
        return [self._pull(p) for p in self._reader.pulls_for_commit(sha)]

    def open_pulls(self, base: str) -> list[Pull]:
        return [self._pull(p) for p in self._reader.open_pulls(base)]

    def label_events(self, number: int) -> list[LabelEvent]:
        return [
            replace(e, label=canonical_labels([e.label], self._renamed)[0])
            for e in self._reader.label_events(number)
        ]


def _pinned(
    reader: Reader, run_id: int, listed: Callable[[Run], list[Artifact]] | None = None
) -> tuple[Candidate, ...]:
    """The pinned run with its artifacts (all of them, or those `listed` gives), or nothing
    when it does not exist."""
    try:
        run = reader.run(run_id)
    except GitHubError as exc:
        if exc.status == 404:
            return ()
        raise
    artifacts = listed(run) if listed else reader.artifacts(run.id)
    return (Candidate(run, tuple(artifacts)),)


def source_artifacts(reader: Reader, run: Run, known: Iterable[Artifact] = ()) -> list[Artifact]:
    """The artifacts of a source run that a reuse decision reads: all of them when they fit
    one page, else those of the names it reads, one listing each (a full sweep uploads an
    artifact per job: 2,500 of them would take 25 pages). `known` are artifacts already
    listed in full for their names (the aggregates, found across the repository)."""
    from infx.sweep.record import PLAN_ARTIFACT

    first, whole = reader.run_artifacts_page(run.id)
    if whole:
        return first
    known = list(known)
    have = {a.name for a in known}
    names = [*REPUBLISHED, *([PLAN_ARTIFACT] if run.event == "workflow_dispatch" else [])]
    return known + [
        a for name in names if name not in have for a in reader.run_artifacts_named(run.id, name)
    ]


def permissions(reader: Reader, comments: Iterable[Comment]) -> dict[str, str]:
    """The permissions of those asking for reuse, newest first, up to the first authorized."""
    found: dict[str, str] = {}
    for comment, _ in asking(comments):
        if comment.author not in found:
            found[comment.author] = reader.permission(comment.author)
        if found[comment.author] in WRITE_PERMISSIONS:
            break
    return found


def _search(
    reader: Reader,
    pull: Pull,
    commits: frozenset[str],
    workflow: str,
    names: tuple[str, ...],
    good: Callable[[Candidate], bool],
    listed_suffice: bool,
) -> tuple[tuple[Candidate, ...], bool]:
    """Runs of the PR's commits that uploaded an artifact named in `names`, found through
    the repository's artifact listings instead of a request per run, newest first.

    The newest 100 runs come in one page. A run that costs a request of its own (older
    than that page, or its artifacts when the listed ones do not suffice) is read only
    until one `good` run is found, at most MAX_CANDIDATES of them; True: that cap cut the
    search short."""
    listed: dict[int, list[Artifact]] = {}
    for name in names:
        for artifact in reader.artifacts_since(name, pull.created_at):
            if (
                artifact.run_id is not None
                and artifact.head_branch == pull.head_ref
                and artifact.head_sha in commits
                and not artifact.expired
            ):
                listed.setdefault(artifact.run_id, []).append(artifact)
    if not listed:
        return (), False
    uploaded = {
        run_id: max(a.created_at for a in found if a.created_at) for run_id, found in listed.items()
    }
    recent = {run.id: run for run in reader.recent_runs(workflow, pull.head_ref)}
    read: list[Candidate] = []
    best: Run | None = None
    paid = 0
    for run_id in sorted(uploaded, key=lambda r: uploaded[r], reverse=True):
        known = recent.get(run_id)
        free = known is not None and listed_suffice
        if best is not None and (uploaded[run_id] < best.created_at or not free):
            break  # it started before the best run, or only more requests would tell
        if not free:
            if paid == MAX_CANDIDATES:
                return tuple(read), True
            paid += 1
        run = known if known is not None else reader.run(run_id)
        artifacts = listed[run_id] if listed_suffice else reader.artifacts(run_id)
        candidate = Candidate(run, tuple(artifacts))
        read.append(candidate)
        if good(candidate) and (best is None or run.created_at > best.created_at):
            best = run
    return tuple(read), False


def _own_member(
    reader: Reader,
    run: Run,
    artifacts: Iterable[Artifact],
    where: tuple[str, str],
    unknown: str,
) -> tuple[bytes | None, str]:
    """The bytes of member `where[1]` of the run's one unexpired artifact `where[0]`, or None
    and why not (two such artifacts, or none: then `unknown` is unknown)."""
    name, member = where
    artifacts = tuple(artifacts)
    why = ambiguous(artifacts, (name,), run.id)
    if why:
        return None, why
    found = unexpired(artifacts, name)
    if found is None:
        return None, (
            f"run {run.id} has no unexpired {name} artifact, so {unknown} unknown; "
            "run the sweep again"
        )
    return reader.artifact_member(found.id, member, MAX_MANIFEST_BYTES), ""


def read_manifest(
    reader: Reader, run: Run, artifacts: Iterable[Artifact]
) -> tuple[dict[str, Any] | None, str]:
    """The run's own sweep manifest, or None and why it cannot be read."""
    from infx import schemas

    data, why = _own_member(
        reader, run, artifacts, (MANIFEST_ARTIFACT, MANIFEST_FILE), "what it measured is"
    )
    if data is None:
        return None, why
    try:
        record = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None, f"run {run.id}'s {MANIFEST_ARTIFACT} is not JSON"
    if not isinstance(record, dict) or record.get("format") != MANIFEST_FORMAT:
        return None, f"run {run.id}'s {MANIFEST_ARTIFACT} is not a {MANIFEST_FORMAT} manifest"
    problems = schemas.errors("sweep-manifest", record)
    if problems:
        return None, f"run {run.id}'s {MANIFEST_ARTIFACT} breaks its schema: {problems[0].message}"
    return record, ""


def source_facts(reader: Reader, pull: Pull, request: Request, workflow: str) -> SourceFacts:
    """The PR's commits, the pinned run or the candidates, and the chosen run's manifest."""
    commits = frozenset(reader.pull_commits(pull.number))
    pinned = request.command.run_id
    repo = reader.slug
    if pinned is not None:
        candidates, exhausted = (
            _pinned(reader, pinned, lambda r: source_artifacts(reader, r)),
            False,
        )
    else:
        candidates, exhausted = _search(
            reader,
            pull,
            commits,
            workflow,
            AGGREGATE_ARTIFACTS,
            lambda c: usable(c, commits, workflow, False, repo),
            listed_suffice=True,
        )
    facts = SourceFacts(commits, candidates, exhausted)
    chosen, _ = pick_run(request, facts, workflow, pull.number, repo)
    if chosen is None:
        return facts
    if pinned is None:
        # The listings name only the aggregate artifacts; the manifest is the run's own.
        full = Candidate(chosen.run, tuple(source_artifacts(reader, chosen.run, chosen.artifacts)))
        candidates = tuple(full if c.run.id == full.run.id else c for c in candidates)
        chosen = full
    record, problem = read_manifest(reader, chosen.run, chosen.artifacts)
    lineage = read_lineage(reader, chosen) if chosen.run.event == "workflow_dispatch" else None
    issued: dict[int, Issued] = {}
    if record:
        main = getattr(reader, "main_branch", "main")
        runs = [chosen.run, *(lineage.members if lineage is not None else ())]
        issued = {run.id: read_issued(reader, run, main) for run in runs}
    return replace(
        facts,
        candidates=candidates,
        manifest=record,
        manifest_problem=problem,
        lineage=lineage,
        issued=issued,
    )


def _rerun_record(reader: Reader, run: Run, artifacts: Iterable[Artifact]) -> Any:
    """A run's rerun record (rerun.json in its sweep-plan), or why it has none (a str)."""
    from infx.sweep.record import PLAN_ARTIFACT, RECORD_FILE, RunRecord

    artifacts = tuple(artifacts)
    why = ambiguous(artifacts, (PLAN_ARTIFACT,), run.id)
    if why:
        return why
    plan = unexpired(artifacts, PLAN_ARTIFACT)
    if plan is None:
        return f"no unexpired {PLAN_ARTIFACT} artifact"
    try:
        data = json.loads(reader.artifact_member(plan.id, RECORD_FILE, MAX_MANIFEST_BYTES))
        return RunRecord.from_json(data, RECORD_FILE)
    except (json.JSONDecodeError, UnicodeDecodeError, UsageError) as exc:
        return f"its {RECORD_FILE} is unreadable ({exc})"


def _run_or_none(reader: Reader, run_id: int) -> Run | None:
    try:
        return reader.run(run_id)
    except GitHubError as exc:
        if exc.status == 404:
            return None
        raise


def read_lineage(reader: Reader, chosen: Candidate) -> Lineage:
    """A rerun run's record of its lineage (rerun.json in its sweep-plan), its original run,
    and every run between them (each one's collect merged its source's results): read
    source by source, at most MAX_DEPTH of them."""
    from infx.sweep.record import MAX_DEPTH, PLAN_ARTIFACT, RunRecord

    record = _rerun_record(reader, chosen.run, chosen.artifacts)
    if not isinstance(record, RunRecord):
        return Lineage(None, None, str(record))
    root = _run_or_none(reader, record.root)
    if root is None:
        return Lineage(record.pr, None, f"its original run {record.root} does not exist")
    members: list[Run] = []
    seen = {chosen.run.id}
    source = record.source
    while source is not None and source != root.id:
        if source in seen or len(members) >= MAX_DEPTH:
            return Lineage(record.pr, root, f"its lineage loops or runs past {MAX_DEPTH} reruns")
        seen.add(source)
        run = _run_or_none(reader, source)
        if run is None:
            return Lineage(record.pr, root, f"its source run {source} does not exist")
        found = _rerun_record(reader, run, reader.run_artifacts_named(run.id, PLAN_ARTIFACT))
        if not isinstance(found, RunRecord):
            return Lineage(record.pr, root, f"its source run {run.id}: {found}")
        if found.root != record.root or found.pr != record.pr:
            return Lineage(record.pr, root, f"its source run {run.id} belongs to another lineage")
        members.append(run)
        source = found.source
    return Lineage(record.pr, root, members=(*members, root))


def pull_facts(
    reader: Reader, pull: Pull, workflow: str, default: Request | None = None
) -> PullFacts:
    """A PR's comments and, if someone authorized asks (or `default` stands in), its runs."""
    comments = tuple(reader.comments(pull.number))
    allowed = permissions(reader, comments)
    request = newest_request(comments, allowed) or default
    if request is None:
        return PullFacts(pull, comments, allowed)
    return PullFacts(pull, comments, allowed, source_facts(reader, pull, request, workflow))


def gate_facts(
    reader: Reader, event: GateEvent, workflow: str, main_branch: str = "main"
) -> tuple[PullFacts, ...]:
    """The PRs a sweep run's reuse decision looks at."""
    if gate_needs_nothing(event, main_branch):
        return ()
    if event.name == "pull_request" and event.pr_number is not None:
        return (pull_facts(reader, reader.pull(event.pr_number), workflow),)
    pulls = reader.pulls_for_commit(event.commit_sha)
    if len(pulls) == 1:
        return (pull_facts(reader, pulls[0], workflow),)
    # None or several PRs: at most whether any of them asks matters.
    found = []
    for pull in pulls:
        comments = tuple(reader.comments(pull.number))
        found.append(PullFacts(pull, comments, permissions(reader, comments)))
    return tuple(found)


def ack_reads(
    reader: Reader, event: CommentEvent, workflow: str, merging: Callable[[PullFacts], Merging]
) -> AckReads:
    """What `decide_ack` reads, through `reader`; `merging` says what merging a PR sweeps."""

    def pull(current: Comment) -> PullFacts:
        found = reader.pull(event.issue_number)
        comments = tuple(reader.comments(event.issue_number))
        allowed = permissions(reader, comments)
        if current.association in PREFILTER_ASSOCIATIONS and current.author not in allowed:
            allowed[current.author] = reader.permission(current.author)
        return PullFacts(found, comments, allowed)

    def source(facts: PullFacts, request: Request) -> PullFacts:
        return replace(facts, source=source_facts(reader, facts.pull, request, workflow))

    return AckReads(lambda: reader.comment(event.comment_id), pull, source, merging)


def stage_facts(reader: Reader, event: CommentEvent, workflow: str) -> StageFacts | None:
    """The requester's permission, the PR and its candidate runs for a /stage-results comment."""
    if stage_ignores(event) or stage_refusal(event):
        return None
    comment = reader.comment(event.comment_id)
    permission = reader.permission(comment.author)
    if permission not in WRITE_PERMISSIONS:
        return StageFacts(comment, permission)
    pull = reader.pull(event.issue_number)
    commits = frozenset(reader.pull_commits(pull.number))
    events = tuple(reader.label_events(pull.number))
    _, run_id = stage_command(event.body)
    if run_id is not None:
        candidates, exhausted = _pinned(reader, run_id), False
    else:
        candidates, exhausted = _search(
            reader,
            pull,
            commits,
            workflow,
            (METADATA_ARTIFACT,),
            lambda c: stageable(c, pull, commits, events, workflow, reader.slug)[0] is None,
            listed_suffice=False,
        )
    main = getattr(reader, "main_branch", "main")
    facts = StageFacts(
        comment, permission, pull, commits, events, candidates, exhausted, main_branch=main
    )
    chosen, _, _ = chosen_run(event, facts, pull, workflow, reader.slug)
    if chosen is None:
        return facts
    # Which PR the chosen run ran for: the issuer's receipt (three requests), as for reuse.
    return replace(facts, issued={chosen.run.id: read_issued(reader, chosen.run, main)})

"""Find main's history for a comparison: the newest successful push-to-main sweep runs
whose `results_bmk` tables hold this run's configs (up to `runs` of them), within a fixed
request budget.

The cost is known before the search starts: one request lists the newest 100 successful
push runs, one lists the repository's newest `results_bmk` artifacts (each names its run),
and each further request either downloads a candidate's table or, for a run older than
that artifact page, looks up its artifact. The client's meter counts the requests (a
retry is one more); before each, the search asks whether its budget has room. It stops
when every config has a baseline, when the candidates run out, or when the budget is
spent; whatever stopped it is said in the comment.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

from infx.errors import GitHubError
from infx.github.budget import Meter, Tab
from infx.github.values import Artifact, Run
from infx.results.ingest.process import FORMAT, TABLE_FILE, result_errors
from infx.results.table.keys import configs_of
from infx.results.table.rows import Row, RunInfo, Table, run_of

RESULTS_ARTIFACT = "results_bmk"
ANY = "*"  # stands for every config: main's history whatever it holds
DEFAULT_BUDGET = 6
MAX_ARTIFACT_BYTES = 2 << 30
MAX_TABLE_BYTES = 256 << 20
PAGE = 100


class Client(Protocol):
    meter: Meter  # counts every request the client makes

    def run(self, run_id: int) -> Run: ...

    def successful_runs(
        self, workflow: str, branch: str, event: str, limit: int = PAGE
    ) -> list[Run]: ...

    def artifacts_named(self, name: str, limit: int = PAGE) -> list[Artifact]: ...

    def run_artifacts_named(self, run_id: int, name: str) -> list[Artifact]: ...

    def download_artifact(self, artifact_id: int, target: Path, max_bytes: int) -> int: ...


@dataclass(frozen=True)
class Baseline:
    run: Run
    rows: list[Row]
    meta: RunInfo = field(default_factory=RunInfo)  # the table's own `run`, if any

    def document(self) -> Table:
        """The table as a history entry: its rows and the run that made them (the API's
        facts where the table does not say)."""
        run = self.run
        meta: RunInfo = {
            "id": run.id,
            "attempt": run.run_attempt,
            "sha": run.head_sha,
            "url": run.html_url,
            "created_at": run.created_at.isoformat().replace("+00:00", "Z"),
        }
        meta.update(self.meta)
        return {"format": FORMAT, "run": meta, "rows": self.rows}


@dataclass
class Search:
    """A walk over main's runs within a request budget, and what it found and skipped."""

    budget: int = DEFAULT_BUDGET
    baselines: list[Baseline] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    stopped: str = ""
    listed: int = 0  # successful push runs considered
    tab: Tab | None = None  # the client's meter, counting from the search's first request

    @property
    def requests(self) -> int:
        """The API requests the search made, retries included."""
        return self.tab.count if self.tab is not None else 0

    def spend(self, client: Client) -> bool:
        """Whether one more request fits the budget; if not, say so and stop the walk."""
        if self.tab is None:
            self.tab = client.meter.tab()
        if self.requests >= self.budget:
            self.stopped = f"request budget of {self.budget} spent"
            return False
        return True

    def close(self) -> None:
        """The walk is over: later reads of the same client are not the search's."""
        if self.tab is not None:
            self.tab.close()

    def describe(self) -> str:
        text = f"{self.requests} API request(s)"
        if self.stopped:
            text += f"; {self.stopped}"
        if self.skipped:
            text += "; skipped " + ", ".join(self.skipped)
        return text


def read_document(archive: Path, label: str) -> tuple[Table, bytes]:
    """The results table inside an artifact zip, and its bytes; ValueError says why it
    cannot be used."""
    try:
        with zipfile.ZipFile(archive) as zf:
            try:
                info = zf.getinfo(TABLE_FILE)
            except KeyError:
                raise ValueError(f"{label} has no {TABLE_FILE}") from None
            if info.file_size > MAX_TABLE_BYTES:
                raise ValueError(f"{label}: {TABLE_FILE} is larger than {MAX_TABLE_BYTES} bytes")
            data = zf.read(info)
            doc: object = json.loads(data)
    except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{label}: unreadable {TABLE_FILE} ({exc})") from None
    if not isinstance(doc, dict) or result_errors(doc):
        raise ValueError(f"{label}: {TABLE_FILE} is not an infx results table")
    return cast(Table, doc), data  # the schema accepted it


def main_results(
    client: Client,
    search: Search,
    *,
    workflow: str,
    branch: str,
    limit: int = PAGE,
    more: Callable[[], bool] = lambda: True,
) -> Iterator[tuple[Run, Artifact]]:
    """The newest `limit` successful push runs on `branch`, newest first, each with its
    newest results_bmk artifact (runs without one are passed over). Costs one request for
    the runs, one for the repository's newest results_bmk artifacts, and one lookup per run
    older than that artifact page; ends when the budget is spent or `more()` says so."""
    try:
        yield from _walk(client, search, workflow, branch, limit, more)
    finally:
        search.close()


def _walk(
    client: Client,
    search: Search,
    workflow: str,
    branch: str,
    limit: int,
    more: Callable[[], bool],
) -> Iterator[tuple[Run, Artifact]]:
    if not search.spend(client):
        return
    runs = client.successful_runs(workflow, branch, "push", PAGE)
    runs = [
        r
        for r in runs
        if r.conclusion == "success" and r.event == "push" and r.head_branch == branch
    ][:limit]
    search.listed = len(runs)
    if not runs:
        search.stopped = f"no successful push run of {workflow} on {branch}"
        return
    if not search.spend(client):
        return
    page = client.artifacts_named(RESULTS_ARTIFACT, PAGE)
    complete = len(page) < PAGE
    oldest = min((a.created_at for a in page if a.created_at is not None), default=None)
    by_run: dict[int, Artifact] = {}
    for listed in page:  # newest first: a re-run's artifact wins over the first attempt's
        if listed.name == RESULTS_ARTIFACT and listed.run_id is not None:
            by_run.setdefault(listed.run_id, listed)
    for run in runs:
        if search.stopped or not more():
            return
        artifact = by_run.get(run.id)
        if artifact is None:
            if complete or (oldest is not None and run.created_at >= oldest):
                continue
            if not search.spend(client):
                return
            found = client.run_artifacts_named(run.id, RESULTS_ARTIFACT)
            if not found:
                continue
            artifact = found[0]
        yield run, artifact


def download(
    client: Client, search: Search, run: Run, artifact: Artifact, folder: Path
) -> Table | None:
    """The run's results table (one request), or None with the reason in `search.skipped`."""
    found = download_table(client, search, run, artifact, folder)
    return None if found is None else found[0]


def download_table(
    client: Client, search: Search, run: Run, artifact: Artifact, folder: Path
) -> tuple[Table, bytes] | None:
    """The run's results table and its bytes as served (one request), or None with the
    reason in `search.skipped`."""
    label = f"run {run.id}"
    if artifact.expired:
        search.skipped.append(f"{label} (results expired)")
        return None
    if not search.spend(client):
        return None
    target = folder / f"{artifact.id}.zip"
    client.download_artifact(artifact.id, target, MAX_ARTIFACT_BYTES)
    try:
        return read_document(target, label)
    except ValueError as exc:
        search.skipped.append(str(exc))
        return None
    finally:
        target.unlink(missing_ok=True)


def find(
    client: Client,
    rows: list[Row] | None,
    *,
    workflow: str,
    branch: str = "main",
    budget: int = DEFAULT_BUDGET,
    run_id: int | None = None,
    runs: int = 1,
) -> Search:
    """Main runs holding the configs of `rows` (None: any), newest first: with `runs` 1, the
    newest run for each config; above that, up to `runs` runs holding any of them (main's
    history). API errors propagate."""
    wanted = configs_of(rows) if rows is not None else {ANY}
    search = Search(budget=budget)
    try:
        return _find(client, search, wanted, workflow, branch, run_id, runs)
    finally:
        search.close()


def _find(
    client: Client,
    search: Search,
    wanted: set[str],
    workflow: str,
    branch: str,
    run_id: int | None,
    runs: int,
) -> Search:
    asked = set(wanted)
    with tempfile.TemporaryDirectory(prefix="infx-baseline-") as tmp:
        folder = Path(tmp)

        def take(run: Run, artifact: Artifact) -> None:
            nonlocal wanted
            doc = download(client, search, run, artifact, folder)
            if doc is None:
                return
            table = doc["rows"]
            held = configs_of(table)
            covered = (wanted if runs <= 1 else asked) & (held | {ANY} if held else held)
            if not covered:
                search.skipped.append(f"run {run.id} (none of these configs)")
                return
            search.baselines.append(Baseline(run, table, run_of(doc)))
            wanted -= covered

        def more() -> bool:
            return bool(wanted) if runs <= 1 else len(search.baselines) < runs

        if run_id is not None:
            search.spend(client)
            pinned = client.run(run_id)
            search.spend(client)
            found = client.run_artifacts_named(run_id, RESULTS_ARTIFACT)
            if not found:
                raise GitHubError(f"run {run_id} has no {RESULTS_ARTIFACT} artifact")
            take(pinned, found[0])
            if wanted and not search.stopped:
                search.stopped = f"run {run_id} lacks {len(wanted)} of these config(s)"
            return search

        candidates = main_results(client, search, workflow=workflow, branch=branch, more=more)
        for run, artifact in candidates:
            take(run, artifact)
        if wanted and not search.stopped:
            search.stopped = (
                f"{len(wanted)} config(s) have no results in the newest {search.listed} "
                f"successful {branch} run(s)"
            )
    return search


def all_configs(client: Client, *, workflow: str, branch: str, runs: int) -> list[Table]:
    """Main's newest `runs` results tables holding anything, oldest first, as history."""
    search = find(client, None, workflow=workflow, branch=branch, budget=runs + 6, runs=runs)
    return [b.document() for b in reversed(search.baselines)]

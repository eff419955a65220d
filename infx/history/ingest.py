"""The `ingest` and `backfill` use cases: a main run's table into the history, and main's
recent runs from their artifacts. Only the main branch's runs go in; which branch that is
comes from the settings where the command runs (`main-branch` in infx.toml)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from infx.history.backfill import backfill
from infx.history.database import shown
from infx.history.rows import main_table
from infx.history.sources import history_url
from infx.history.store import open_history
from infx.results.ingest.files import load_results

if TYPE_CHECKING:  # PyGithub loads only for a command that talks to GitHub
    from infx.github.values import Run
    from infx.results.compare.baseline import Client


class RunReader(Protocol):
    def run(self, run_id: int) -> Run: ...


@dataclass(frozen=True)
class Said:
    """The one line a history command prints, and whether it goes to stderr."""

    line: str
    err: bool = False


def ingest(
    table: Path, where: str | None, run_id: int | None, github: Callable[[], RunReader]
) -> Said:
    """Store the table (a re-run's attempt replaces the points it measured again); with
    `run_id`, as that workflow run, read through the API."""

    url, found = history_url(where)
    doc = load_results(table)
    run = github().run(run_id) if run_id is not None else None
    checked = main_table(doc, run, found.main_branch)
    if not checked.points:
        return Said(f"{table} holds no results: nothing to store", err=True)
    with open_history(url) as history:
        report = history.store(checked)
    return Said(f"{report.describe()} -> {shown(url)}")


def fill(
    where: str | None,
    github: Callable[[], Client],
    *,
    runs: int,
    workflow: str,
    branch: str | None,
    budget: int | None,
    vouch: Callable[[Run, bytes, str], Sequence[tuple[str, Mapping[str, Any]]]] | None = None,
) -> Said:
    """Store main's newest `runs` successful push runs not stored yet at their newest
    attempt, within `budget` requests (default 2 + 2 x runs); a run that republished
    another run's table only with the receipts `vouch` finds for it (from the run, its
    table's bytes and the main branch)."""

    url, found = history_url(where)
    client = github()
    main = branch or found.main_branch
    with open_history(url) as history:
        done = backfill(
            client,
            history,
            runs=runs,
            workflow=workflow,
            branch=main,
            budget=budget or 2 + 2 * runs,
            vouch=None if vouch is None else lambda run, data: vouch(run, data, main),
        )
    return Said(f"{done.describe()} -> {shown(url)}")

"""Fill the history from main's recent runs through the GitHub API, so a repository that
adopts infx compares against a history on its first day.

The walk over main's runs, its request budget and the artifact download are the baseline
search's (infx/results/compare/baseline.py); what is new is that each table is stored under the
facts GitHub gives for its run, and that runs already stored cost no download. A run
that republished another run's table (a reused merge) goes in only when the issuer's
receipts vouch for that table (`vouch`), and they are stored beside its rows, as the
ingest job stores them: the pull request's code wrote that table, and the backfill after
an ingest that refused it must not store it anyway.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.errors import ResultsError, UsageError
from infx.history.receipts import store_receipts
from infx.history.rows import republished, stamp
from infx.history.store import History, IngestReport
from infx.results.compare.baseline import Client, Search, download_table, main_results

if TYPE_CHECKING:
    from infx.github.values import Run

# The receipts, by role, that vouch for a main run's table (its results.json as served);
# a ResultsError or UsageError naming the break when they do not.
Vouch = Callable[["Run", bytes], Sequence[tuple[str, Mapping[str, Any]]]]


@dataclass
class Backfill:
    search: Search
    stored: list[IngestReport] = field(default_factory=list)
    known: int = 0  # runs already stored at GitHub's newest attempt

    def describe(self) -> str:
        added = sum(r.added for r in self.stored)
        replaced = sum(r.replaced for r in self.stored)
        return (
            f"stored {len(self.stored)} run(s) ({added} point(s) added, {replaced} replaced), "
            f"{self.known} already stored; {self.search.describe()}"
        )


def backfill(
    client: Client,
    history: History,
    *,
    runs: int,
    workflow: str,
    branch: str,
    budget: int,
    vouch: Vouch | None = None,
) -> Backfill:
    """Store the results of the newest `runs` successful pushes to `branch`; a republished
    table only with the receipts `vouch` finds for it (None: it is skipped). Each run is one
    transaction; API errors propagate (runs stored before them stay, each complete)."""
    done = Backfill(Search(budget=budget))
    search = done.search
    with tempfile.TemporaryDirectory(prefix="infx-backfill-") as tmp:
        folder = Path(tmp)
        for run, artifact in main_results(
            client, search, workflow=workflow, branch=branch, limit=runs
        ):
            stored = history.attempt_of(run.id)
            if stored is not None and stored >= run.run_attempt:
                done.known += 1
                continue
            found = download_table(client, search, run, artifact, folder)
            if found is None:
                continue
            doc, data = found
            chain: Sequence[tuple[str, Mapping[str, Any]]] = ()
            reused = republished(doc, run)
            if reused and not search.spend(client):
                break
            try:
                if reused:
                    if vouch is None:
                        raise ResultsError("republished another run's table; no receipts read")
                    chain = vouch(run, data)
                done.stored.append(history.ingest(stamp(doc, run, branch)))
            except (ValueError, ResultsError, UsageError) as exc:
                text = str(exc)
                search.skipped.append(text if text.startswith("run ") else f"run {run.id}: {text}")
                continue
            if chain:
                store_receipts(history.url, run.id, chain)
    return done

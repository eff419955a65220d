"""Fill the history from main's recent runs through the GitHub API, so a repository that
adopts infx compares against a history on its first day.

The walk over main's runs, its request budget and the artifact download are the baseline
search's (infx/results/compare/baseline.py); what is new is that each table is stored under the
facts GitHub gives for its run, and that runs already stored cost no download.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from infx.errors import ResultsError
from infx.history.rows import stamp
from infx.history.store import History, IngestReport
from infx.results.compare.baseline import Client, Search, download, main_results


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
    client: Client, history: History, *, runs: int, workflow: str, branch: str, budget: int
) -> Backfill:
    """Store the results of the newest `runs` successful pushes to `branch`. Each run is one
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
            doc = download(client, search, run, artifact, folder)
            if doc is None:
                continue
            try:
                done.stored.append(history.ingest(stamp(doc, run, branch)))
            except (ValueError, ResultsError) as exc:
                text = str(exc)
                search.skipped.append(text if text.startswith("run ") else f"run {run.id}: {text}")
    return done

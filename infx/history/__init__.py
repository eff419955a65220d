"""Main's results history: every main run's result rows in a database (an SQLite file by
default, PostgreSQL when given a URL), so comparisons can look further back than one run.

    with open_history() as history:
        history.ingest(doc)                                   # a main run's results table
        docs = history.main_runs(limit=30, configs=[identity, ...])   # oldest first

Importing this package loads no database library; opening a history does.
"""

from __future__ import annotations

from infx.history.store import History, IngestReport, open_history

__all__ = ["History", "IngestReport", "open_history"]

"""Where main's history is read from when it is not the API: a folder of results tables, or
the results history database; and the settings that name it. The edge of `compare` and
`changes` (the API's history is `infx.results.compare.facts`)."""

from __future__ import annotations

import os
from pathlib import Path

from infx import git, settings
from infx.errors import GitError
from infx.history.database import location, require_existing, shown
from infx.history.reader import reading
from infx.history.store import open_history
from infx.history.windows import families_of, per_config
from infx.markdown import Md, code, text
from infx.results.compare.rules import MainHistory
from infx.results.ingest.files import history_folder
from infx.results.table.keys import config_key, family_key
from infx.results.table.rows import Row, Table
from infx.settings import Settings


def repository_settings() -> Settings:
    """infx.toml of the repository the command runs in (defaults outside one)."""
    return settings.load(repository_root())


def repository_root() -> Path:
    """The repository the command runs in (its root holds infx.toml), else the current
    folder: relative history paths are read from there, wherever the command runs."""
    try:
        return git.root()
    except GitError:
        return Path.cwd()


def history_url(explicit: str | None) -> tuple[str, Settings]:
    """The history's URL and the repository settings."""

    root = repository_root()
    found = settings.load(root)
    return location(explicit, os.environ, found, root), found


def stored_history(where: str, rows: list[Row], limit: int) -> MainHistory:
    """Main's history from a folder of tables, else from the results history database
    (`infx results ingest` fills it): for each of `rows`' configs (and the other configs of
    their families) the newest `limit` runs holding it. From the database, a frame of the
    numbers alone (no row's JSON parsed but accuracy scores')."""
    if Path(where).is_dir():
        docs = per_config(
            history_folder(Path(where), repository_settings().main_branch), families_of(rows), limit
        )
        return MainHistory.of_documents(
            docs, Md(f"{len(docs)} run(s) from {code(Path(where).name)}")
        )
    from infx.history.frames import read  # NumPy: after require_stats has said it is there

    url, _ = history_url(where)
    require_existing(url)
    # This run's configs and every config of their families, so that one main measured
    # and this run dropped shows as coverage lost.
    keys = {config_key(r["identity"]) for r in rows}
    families = {family_key("", r["identity"]) for r in rows}
    with reading(url) as db:
        frame = read(db, limit, keys, families)
    said = Md(f"{len(frame)} main run(s) from the results history ({text(shown(url))})")
    return MainHistory(frame, said)


def stored_documents(where: str, limit: int) -> list[Table]:
    """Main's newest `limit` runs as results documents, from a folder of tables or the
    results history database (which must exist: it is read, never made)."""
    if Path(where).is_dir():
        return history_folder(Path(where))
    url, _ = history_url(where)
    require_existing(url)
    with open_history(url) as history:
        return history.main_runs(limit=limit)

"""Where main's history is read from when it is not the API: a folder of results tables, or
the results history database; and the settings that name it. The edge of `compare` and
`changes` (the API's history is `infx.results.compare.facts`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx import git, settings
from infx.errors import GitError
from infx.history.windows import families_of, per_config
from infx.results.compare.rules import MainHistory
from infx.results.ingest.files import history_folder
from infx.results.table.keys import config_key, family_key
from infx.settings import Settings

if TYPE_CHECKING:
    from infx.history.store import History


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
    from infx.history.database import location

    root = repository_root()
    found = settings.load(root)
    return location(explicit, os.environ, found, root), found


def stored_history(where: str, rows: list[dict[str, Any]], limit: int) -> MainHistory:
    """Main's history from a folder of tables, else from the results history database
    (`infx results ingest` fills it): for each of `rows`' configs (and the other configs of
    their families) the newest `limit` runs holding it. From the database, a frame of the
    numbers alone (no row's JSON parsed but accuracy scores')."""
    if Path(where).is_dir():
        docs = per_config(history_folder(Path(where)), families_of(rows), limit)
        return MainHistory.of_documents(docs, f"{len(docs)} run(s) from `{Path(where).name}`")
    from infx.history.database import require_existing, shown
    from infx.history.frames import read
    from infx.history.reader import reading

    url, _ = history_url(where)
    require_existing(url)
    # This run's configs and every config of their families, so that one main measured
    # and this run dropped shows as coverage lost.
    keys = {config_key(r["identity"]) for r in rows}
    families = {family_key("", r["identity"]) for r in rows}
    with reading(url) as db:
        frame = read(db, limit, keys, families)
    return MainHistory(frame, f"{len(frame)} main run(s) from the results history ({shown(url)})")


def stored_documents(where: str, limit: int) -> list[dict[str, Any]]:
    """Main's newest `limit` runs as results documents, from a folder of tables or the
    results history database."""
    if Path(where).is_dir():
        return history_folder(Path(where))
    with _opened(where) as history:
        return history.main_runs(limit=limit)


def _opened(where: str) -> History:
    """The history database `where` names, which must exist (it is read, never made)."""
    from infx.history import open_history
    from infx.history.database import require_existing

    url, _ = history_url(where)
    require_existing(url)
    return open_history(url)

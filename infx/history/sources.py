"""Where main's history is read from when it is not the API: a folder of results tables, or
the results history database; and the settings that name it. The edge of `compare` and
`changes` (the API's history is `infx.results.compare.facts`)."""

from __future__ import annotations

import os
from pathlib import Path

from infx import git, settings
from infx.errors import GitError
from infx.history.database import location, require_existing, shown
from infx.history.store import open_history
from infx.history.windows import families_of, per_config
from infx.markdown import Md, code, text
from infx.results.compare.rules import MainHistory
from infx.results.ingest.files import history_folder
from infx.results.table.keys import family_key
from infx.results.table.rows import Row
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


def stored_history(where: str, rows: list[Row] | None, limit: int) -> MainHistory:
    """Main's history from a folder of tables, else from the results history database
    (`infx results ingest` fills it): for each of `rows`' configs (and the other configs of
    their families) the newest `limit` runs holding it."""
    if Path(where).is_dir():
        docs = history_folder(Path(where), repository_settings().main_branch)
        if rows is not None:
            docs = per_config(docs, families_of(rows), limit)
        return MainHistory(docs, Md(f"{len(docs)} run(s) from {code(Path(where).name)}"))

    url, _ = history_url(where)
    require_existing(url)
    with open_history(url) as history:
        configs = None
        if rows is not None:
            # This run's configs and every config of their families, so that one main
            # measured and this run dropped shows as coverage lost.
            families = {family_key("", r["identity"]) for r in rows}
            configs = [r["identity"] for r in rows] + [
                c for c in history.config_identities() if family_key("", c) in families
            ]
        docs = history.main_runs(limit=limit, configs=configs)
    said = Md(f"{len(docs)} main run(s) from the results history ({text(shown(url))})")
    return MainHistory(docs, said)

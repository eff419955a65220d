"""Every history test runs twice: on an SQLite file and on a real PostgreSQL server that a
session fixture starts (`postgres` in tests/conftest.py). The PostgreSQL half skips only where it
cannot run: not root and no PostgreSQL binaries. As root (CI: `.ci/run` installs Debian's
package) a missing server fails the tests instead."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.history.postgres import create_database

_names = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty history database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.sqlite'}"
    return create_database(request.getfixturevalue("postgres"), f"t{next(_names)}")

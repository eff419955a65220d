"""Every history test runs twice: on an SQLite file and on a real PostgreSQL server that a
session fixture starts (tests/history/postgres.py). The PostgreSQL half skips only where it
cannot run: not root and no PostgreSQL binaries. As root (CI: `.ci/run` installs Debian's
package) a missing server fails the tests instead."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.github.conftest import api
from tests.history.postgres import create_database, server, unavailable

__all__ = ["api"]
_names = itertools.count()


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    with server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty history database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.sqlite'}"
    return create_database(request.getfixturevalue("postgres"), f"t{next(_names)}")

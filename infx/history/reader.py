"""The history read without SQLAlchemy: what `results compare` reads of it
(`infx.history.frames`), on the driver's own connection (sqlite3, psycopg), in one
read-only snapshot. SQLAlchemy and Alembic load only when the database is not at the
newest schema yet (`open_history` migrates it first) or its URL needs SQLAlchemy's
parsing (an SQLite URL with options, another driver); ingest and every write keep them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from infx.errors import HistoryError
from infx.history.database import HEAD, POSTGRES, shown, sqlite_file


class Reader:
    """A DB-API connection inside a read-only transaction; SQL written with `?`
    placeholders (psycopg's are `%s`)."""

    def __init__(self, conn: Any, postgres: bool) -> None:
        self.conn, self.postgres = conn, postgres

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        # psycopg's binary results: numbers arrive as numbers, not text to parse (a third
        # of the client's time for 40,000 points).
        cursor = self.conn.cursor(binary=True) if self.postgres else self.conn.cursor()
        try:
            cursor.execute(sql.replace("?", "%s") if self.postgres else sql, tuple(params))
            return list(cursor.fetchall())
        finally:
            cursor.close()


def _errors(postgres: bool) -> tuple[type[Exception], ...]:
    """The driver's error classes (psycopg loads only for PostgreSQL)."""
    import sqlite3

    if not postgres:
        return (sqlite3.Error,)
    import psycopg

    return (psycopg.Error, sqlite3.Error)


@contextlib.contextmanager
def _said(url: str, doing: str, postgres: bool) -> Iterator[None]:
    """A driver's failure as one HistoryError line (no password, no traceback)."""
    try:
        yield
    except _errors(postgres) as exc:
        text = str(exc).strip()
        detail = text.splitlines()[0] if text else type(exc).__name__
        raise HistoryError(f"{doing} {shown(url)}: {detail}") from None


def _postgres(url: str) -> str | None:
    """A libpq URI for a PostgreSQL URL infx reads with psycopg, else None."""
    scheme, found, rest = url.partition("://")
    return f"postgresql://{rest}" if found and scheme in POSTGRES else None


def _connect(url: str) -> tuple[Any, bool]:
    """(DB-API connection, PostgreSQL?): the driver's own where the URL is plain, else
    through SQLAlchemy's engine (which parses every URL it accepts)."""
    path = sqlite_file(url)
    if path is not None and "?" not in url:
        import sqlite3

        # Read-only: a comparison never writes main's history (the verdict is recorded
        # through SQLAlchemy, after).
        lite = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=120)
        lite.isolation_level = None  # the snapshot is begun below
        return lite, False
    conninfo = _postgres(url)
    if conninfo is not None:
        import psycopg

        pg = psycopg.connect(conninfo, connect_timeout=15, application_name="infx")
        pg.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        pg.read_only = True
        return pg, True
    from infx.history.database import engine

    made = engine(url)
    return made.raw_connection(), made.dialect.name == "postgresql"


def _revision(db: Reader) -> str | None:
    try:
        found = db.rows("SELECT version_num FROM alembic_version")
    except _errors(db.postgres):
        db.conn.rollback()
        return None
    db.conn.rollback()
    return str(found[0][0]) if found else None


@contextlib.contextmanager
def reading(url: str) -> Iterator[Reader]:
    """The history at `url` (which must exist: `database.require_existing`), read in one
    snapshot; brought to the newest schema first when it is not there yet."""
    postgres = _postgres(url) is not None
    with _said(url, "cannot open the history", postgres):
        conn, postgres = _connect(url)
    try:
        with _said(url, "cannot read the history", postgres):
            current = _revision(Reader(conn, postgres))
        if current != HEAD:  # older (or new): migrate as any other opener does
            conn.close()
            from infx.history.database import engine, migrate

            made = engine(url)
            try:
                migrate(made, url)
            finally:
                made.dispose()
            with _said(url, "cannot open the history", postgres):
                conn, postgres = _connect(url)
        with _said(url, "cannot read the history", postgres):
            if not postgres:
                conn.cursor().execute("BEGIN")  # one snapshot for every query
            yield Reader(conn, postgres)
            conn.rollback()
    finally:
        conn.close()

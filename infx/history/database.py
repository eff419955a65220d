"""Where the history lives and how it is opened: an SQLite file (the default, no server) or a
PostgreSQL database, brought up to the newest schema revision before first use.

SQLAlchemy, psycopg and Alembic are imported here, never at start-up: only the history
commands load this module.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.errors import HistoryError, UsageError
from infx.settings import Settings

# SQLAlchemy and Alembic load inside the functions that use them (start-up time).
if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Table
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
    from sqlalchemy.engine import Connection, Engine

ENV = "INFX_HISTORY_URL"
DEFAULT_FILE = ".infx/history.sqlite"
HEAD = "0006"  # the newest migration in migrations/versions (a test holds them equal)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Key of the PostgreSQL advisory lock that serializes migrations of one database.
_LOCK = 0x1F1_4157
_SQLITE = ("sqlite", "sqlite+pysqlite")
POSTGRES = ("postgresql", "postgres", "postgresql+psycopg")


def location(explicit: str | None, env: Mapping[str, str], settings: Settings, root: Path) -> str:
    """The history's URL: --history, else INFX_HISTORY_URL, else the `history` setting, else
    .infx/history.sqlite under `root`. A plain path is an SQLite file; a relative one, plain
    or in an `sqlite:///` URL, is relative to `root` (the repository's root), wherever the
    command runs."""
    value = explicit or env.get(ENV) or settings.history or DEFAULT_FILE
    scheme, found, rest = value.partition(":///")
    if found and scheme in _SQLITE and rest and not rest.startswith("/"):
        relative, _, query = rest.partition("?")
        if not relative.startswith((":memory:", "file:")):
            return f"{scheme}:///{root / relative}" + (f"?{query}" if query else "")
        return value
    if "://" in value:
        return value
    path = Path(value).expanduser()
    return f"sqlite:///{path if path.is_absolute() else root / path}"


def sqlite_file(url: str) -> Path | None:
    """The file of an SQLite URL (None: another database)."""
    scheme, found, rest = url.partition(":///")
    if not found or scheme not in _SQLITE:
        return None
    return Path(rest.partition("?")[0])


def require_existing(url: str) -> None:
    """A history that is read, never created: an SQLite file that is not there is a usage
    error (an empty history would call every point new and pass every pull request)."""
    path = sqlite_file(url)
    if path is not None and not path.is_file():
        raise UsageError(
            f"history: no SQLite file at {path}: a comparison reads main's history and "
            "never creates one (`infx results ingest` or `backfill` fill it)"
        )


def shown(url: str) -> str:
    """The URL as messages may print it: never with its password (`user:***@host`)."""
    scheme, found, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if not found or not at or ":" not in userinfo:
        return url
    user, hidden = userinfo.split(":", 1)[0], "***"
    return f"{scheme}://{user}:{hidden}@{host}{slash}{path}"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def engine(url: str) -> Engine:
    """An engine for an SQLite or PostgreSQL URL; any other database is a usage error."""
    from sqlalchemy import create_engine, event
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UsageError(f"history: {url!r} is neither a path nor a database URL") from None
    if parsed.drivername in _SQLITE:
        database = parsed.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            raise UsageError(f"history: {shown(url)} names no SQLite file")
        folder = Path(database).parent
        if not folder.exists():
            folder.mkdir(parents=True)
            # A folder infx made for its own file keeps itself out of git, as pytest's does.
            (folder / ".gitignore").write_text("# created by infx\n*\n")
        made = create_engine(
            parsed.set(drivername="sqlite+pysqlite"),
            connect_args={"timeout": 120},
            json_serializer=_compact,
        )

        @event.listens_for(made, "connect")
        def _connect(dbapi: Any, _record: Any) -> None:
            dbapi.isolation_level = None  # transactions are begun below, not by pysqlite
            dbapi.execute("PRAGMA foreign_keys = ON")

        @event.listens_for(made, "begin")
        def _begin(conn: Connection) -> None:
            # A writer takes the write lock at once and waits its turn (the timeout above);
            # a reader sees one snapshot for its whole transaction.
            write = conn.get_execution_options().get("infx_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return made
    if parsed.drivername in POSTGRES:
        return create_engine(
            parsed.set(drivername="postgresql+psycopg"),
            connect_args={"connect_timeout": 15, "application_name": "infx"},
            json_serializer=_compact,
        )
    raise UsageError(
        f"history: {parsed.drivername} databases are not supported: give an SQLite path "
        "or a postgresql:// URL"
    )


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _revision(conn: Connection) -> str | None:
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


@contextlib.contextmanager
def database_errors(url: str, doing: str) -> Iterator[None]:
    """A database's failure as one HistoryError line (no password, no traceback)."""
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    try:
        yield
    except DBAPIError as exc:
        text = str(exc.orig).strip()
        detail = text.splitlines()[0] if text else type(exc.orig).__name__
        raise HistoryError(f"{doing} {shown(url)}: {detail}") from None
    except SQLAlchemyError as exc:
        raise HistoryError(f"{doing} {shown(url)}: {str(exc).splitlines()[0]}") from None


def migrate(made: Engine, url: str) -> None:
    """Bring the schema to HEAD. Concurrent openers of a new database wait for each other
    (PostgreSQL: an advisory lock; SQLite: the write lock), and each migration step runs in
    that one transaction, so a failure leaves the database as it was."""
    with database_errors(url, "cannot open the history"), made.connect() as conn:
        current = _revision(conn)
        conn.rollback()
    if current == HEAD:
        return
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    config = alembic_config()
    with (
        database_errors(url, "cannot migrate the history"),
        made.connect() as conn,
    ):
        conn.execution_options(infx_write=True)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_LOCK})")
            current = _revision(conn)
            if current == HEAD:
                return
            if current is None:
                _require_no_tables(conn, url)
            if current is not None:
                try:
                    ScriptDirectory.from_config(config).get_revision(current)
                except CommandError:
                    raise HistoryError(
                        f"the history {shown(url)} is at schema revision {current}, which "
                        f"this infx does not know (it knows up to {HEAD}): a newer infx "
                        "wrote it; upgrade infx"
                    ) from None
            config.attributes["connection"] = conn
            command.upgrade(config, "head")


def _require_no_tables(conn: Connection, url: str) -> None:
    """An SQLite file without infx's schema becomes a history only when it is empty: infx's
    tables added beside another program's would change a file that is not infx's to change."""
    from sqlalchemy import inspect

    if conn.dialect.name != "sqlite":
        return
    tables = sorted(inspect(conn).get_table_names())
    if tables:
        listed = ", ".join(tables[:3]) + (f" and {len(tables) - 3} more" if len(tables) > 3 else "")
        raise HistoryError(
            f"{sqlite_file(url) or shown(url)} is not an infx history database: it holds other "
            f"tables ({listed}); name a new or empty file"
        )


def dialect_insert(conn: Connection) -> Callable[[Table], PostgresInsert | SqliteInsert]:
    """The dialect's INSERT, which knows ON CONFLICT DO NOTHING."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert

"""Store main's runs and read them back: one transaction per ingest, one snapshot per query."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from infx import git, settings
from infx.errors import GitError, ResultsError
from infx.history import documents
from infx.history import rows as records
from infx.history.database import database_errors, dialect_insert, engine, location, migrate
from infx.history.documents import chunks
from infx.results.table.keys import config_key, config_label
from infx.results.table.metrics import NUMBERS
from infx.results.table.rows import Identity, Table

# SQLAlchemy, and infx.history.tables built on it, load inside the functions that query
# (start-up time).
if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

    from infx.results.table.frame import Frame

_SHOWN = 5  # removed points named in the report


@dataclass(frozen=True)
class IngestReport:
    """What one ingest did to each point of the table."""

    run_id: int
    attempt: int
    sha: str
    added: int = 0
    replaced: int = 0  # stored from an older (or the same) attempt, with other values
    unchanged: int = 0
    kept: int = 0  # stored from a newer attempt, which wins
    run_updated: bool = False
    # Points this attempt had stored that its table, stored again, no longer holds.
    removed: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.replaced or self.run_updated or self.removed)

    def describe(self) -> str:
        total = self.added + self.replaced + self.unchanged + self.kept
        line = (
            f"run {self.run_id} attempt {self.attempt} ({self.sha[:7]}), {total} point(s): "
            f"{self.added} added, {self.replaced} replaced, {self.unchanged} unchanged, "
            f"{self.kept} kept from a newer attempt"
        )
        if self.removed:
            shown = "; ".join(self.removed[:_SHOWN])
            more = f"; and {len(self.removed) - _SHOWN} more" if len(self.removed) > _SHOWN else ""
            line += (
                f"; {len(self.removed)} removed: attempt {self.attempt}'s table no longer "
                f"holds them ({shown}{more})"
            )
        return line


class History:
    """Main's results history. Use as a context manager; see `open_history`."""

    def __init__(self, made: Engine, url: str) -> None:
        self._engine = made
        self.url = url

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._engine.dispose()

    @contextlib.contextmanager
    def connection(self, doing: str, *, write: bool = False) -> Iterator[Connection]:
        """One transaction (a writer takes SQLite's write lock at once); a database error
        is one line, "<doing> <url>: <error>"."""
        with database_errors(self.url, doing), self._engine.connect() as conn:
            if write:
                conn.execution_options(infx_write=True)
            with conn.begin():
                yield conn

    # --- writes -------------------------------------------------------------------------

    def ingest(self, doc: object) -> IngestReport:
        """Store a main run's results table (a document with `run`). Idempotent; per point,
        the newest attempt's values win; all or nothing."""
        return self.store(records.check(doc))

    def store(self, table: records.Table) -> IngestReport:
        """`ingest` for a table `rows.check` has already accepted."""
        with (
            database_errors(self.url, "cannot write to the history"),
            self._engine.connect() as conn,
        ):
            conn.execution_options(infx_write=True)
            with conn.begin():
                return self._store(conn, table)

    def _store(self, conn: Connection, table: records.Table) -> IngestReport:
        from sqlalchemy import and_, bindparam, select

        from infx.history.tables import points, runs

        insert = dialect_insert(conn)
        facts = table.run
        run_values = {
            "attempt": facts.attempt,
            "sha": facts.sha,
            "ref": facts.ref,
            "url": facts.url,
            "created_at": facts.created_at,
            "reused_from": facts.reused_from,
        }
        created = conn.execute(
            insert(runs)
            .values(id=facts.id, ingested_at=records.now(), **run_values)
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(runs.c.id)
        ).first()
        # The run's row is locked (PostgreSQL) until commit: ingests of one run take turns.
        stored = conn.execute(select(runs).where(runs.c.id == facts.id).with_for_update()).one()
        if stored.sha != facts.sha:
            raise ResultsError(
                f"run {facts.id} is stored with commit {stored.sha}; this table says "
                f"{facts.sha}: a run's commit never changes"
            )
        if facts.stamped:  # a run's creation never changes: its first ingest placed it
            run_values["created_at"] = stored.created_at
        run_updated = False
        if (
            not created
            and facts.attempt >= stored.attempt
            and any(getattr(stored, k) != v for k, v in run_values.items())
        ):
            conn.execute(
                runs.update()
                .where(runs.c.id == facts.id)
                .values(ingested_at=records.now(), **run_values)
            )
            run_updated = True
        if facts.reused_from is not None:
            _mark_reused(conn, facts.reused_from, facts.id)
        ids = self._config_ids(conn, table.configs)
        existing = {
            (config_id, kind, conc, variant): (attempt, data)
            for config_id, kind, conc, variant, attempt, data in conn.execute(
                select(
                    points.c.config_id,
                    points.c.kind,
                    points.c.conc,
                    points.c.variant,
                    points.c.attempt,
                    points.c.data,
                ).where(points.c.run_id == facts.id)
            )
        }
        new, changed = [], []
        unchanged = kept = 0
        for found in table.points:
            values = {
                "attempt": facts.attempt,
                "image": found.image,
                "fingerprint": found.fingerprint,
                "data": found.data,
                **dict(zip(NUMBERS, found.numbers, strict=True)),
            }
            key = (ids[found.config], found.kind, found.conc, found.variant)
            old = existing.pop(key, None)
            if old is None:
                new.append(
                    {
                        "run_id": facts.id,
                        "config_id": key[0],
                        "kind": key[1],
                        "conc": key[2],
                        "variant": key[3],
                    }
                    | values
                )
            elif old[0] > facts.attempt:
                kept += 1
            elif old[1] == found.data:
                unchanged += 1
            else:
                changed.append(
                    {"b_config": key[0], "b_kind": key[1], "b_conc": key[2], "b_variant": key[3]}
                    | values
                )
        # A corrected table of this very attempt replaces what the attempt stored: its
        # points the table no longer holds go (an older attempt's points stay).
        gone = [key for key, (attempt, _) in existing.items() if attempt == facts.attempt]
        where = and_(
            points.c.run_id == facts.id,
            points.c.config_id == bindparam("b_config"),
            points.c.kind == bindparam("b_kind"),
            points.c.conc == bindparam("b_conc"),
            points.c.variant == bindparam("b_variant"),
        )
        if gone:
            conn.execute(
                points.delete().where(where),
                [
                    dict(zip(("b_config", "b_kind", "b_conc", "b_variant"), k, strict=True))
                    for k in gone
                ],
            )
        if new:
            conn.execute(points.insert(), new)
        if changed:
            conn.execute(points.update().where(where), changed)
        if new or changed or gone or _unpacked(conn, facts.id):
            _hold(
                conn, facts.id, {(ids[p.config], p.kind, p.variant, p.image) for p in table.points}
            )
        return IngestReport(
            run_id=facts.id,
            attempt=facts.attempt,
            sha=facts.sha,
            added=len(new),
            replaced=len(changed),
            unchanged=unchanged,
            kept=kept,
            run_updated=run_updated,
            removed=self._named(conn, gone),
        )

    @staticmethod
    def _named(conn: Connection, gone: list[tuple[int, str, int, str]]) -> tuple[str, ...]:
        """Removed points as a person reads them: config label, kind, concurrency."""
        if not gone:
            return ()
        from sqlalchemy import select

        from infx.history.tables import configs

        wanted = sorted({key[0] for key in gone})
        identities = {
            config_id: identity
            for chunk in chunks(wanted)
            for config_id, identity in conn.execute(
                select(configs.c.id, configs.c.identity).where(configs.c.id.in_(chunk))
            )
        }
        return tuple(
            f"{config_label(identities[c])} {kind} conc {conc}"
            + (f" ({variant})" if variant else "")
            for c, kind, conc, variant in sorted(gone, key=lambda k: (k[0], k[1], k[2], k[3]))
        )

    @staticmethod
    def _config_ids(conn: Connection, wanted: Mapping[str, Identity]) -> dict[str, int]:
        """Each config's id, new configs added (two ingests adding one config both succeed)."""
        from infx.history.tables import configs

        ids = _select_config_ids(conn, list(wanted))
        new = [k for k in wanted if k not in ids]
        if new:
            missing = [{"key": k, "identity": wanted[k]} for k in new]
            insert = dialect_insert(conn)
            conn.execute(insert(configs).on_conflict_do_nothing(index_elements=["key"]), missing)
            ids.update(_select_config_ids(conn, new))
        return ids

    # --- reads --------------------------------------------------------------------------

    def attempt_of(self, run_id: int) -> int | None:
        """The newest attempt of the run stored, or None when the run is not stored."""
        from sqlalchemy import select

        from infx.history.tables import runs

        with database_errors(self.url, "cannot read the history"), self._engine.connect() as conn:
            return conn.execute(select(runs.c.attempt).where(runs.c.id == run_id)).scalar()

    def main_runs(
        self, *, limit: int = 30, configs: Iterable[Identity] | None = None
    ) -> list[Table]:
        """Results documents of main's runs, oldest first: the newest `limit` runs, or with
        `configs` (identities; a `conc` in them is ignored) each config's own window, the
        newest `limit` runs holding that config (per kind: throughput, accuracy), and of
        each run only the rows of the configs whose window it is in. A config swept less
        often than the others beside it keeps its history."""
        keys = None if configs is None else sorted({config_key(dict(c)) for c in configs})
        if limit <= 0 or keys == []:
            return []
        with database_errors(self.url, "cannot read the history"), self._engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                if keys is None:
                    return documents.newest(conn, limit)
                return documents.windows(conn, limit, keys)

    def main_frame(
        self,
        *,
        limit: int,
        configs: Iterable[Identity],
        families: Iterable[str] = (),
    ) -> Frame:
        """`main_runs(limit=..., configs=...)` as a frame (`infx.history.frames`), with
        the configs of `families` (`family_key("", identity)`) too."""
        from infx.history.frames import read
        from infx.history.reader import Reader

        keys = {config_key(c) for c in configs}
        with database_errors(self.url, "cannot read the history"):
            conn = self._engine.raw_connection()
            try:
                postgres = self._engine.dialect.name == "postgresql"
                # One snapshot for every query (psycopg begins the transaction itself).
                begin = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ" if postgres else "BEGIN"
                conn.cursor().execute(begin)
                return read(Reader(conn, postgres), limit, keys, set(families))
            finally:
                conn.rollback()
                conn.close()

    def config_identities(self) -> list[Identity]:
        """The identity (without `conc`) of every config the history holds a point of: what
        a caller needs to ask for configs it does not name itself, such as the siblings of
        a family."""
        from sqlalchemy import select

        from infx.history.tables import configs

        with database_errors(self.url, "cannot read the history"), self._engine.connect() as conn:
            found = conn.execute(select(configs.c.identity))
            # Each an identity a checked table stored (`rows.check`).
            return [cast(Identity, dict(row.identity)) for row in found]


def _hold(conn: Connection, run_id: int, named: set[tuple[int, str, str, str]]) -> None:
    """The series the table names (config, kind, variant, image) exist, and `run_series`
    says again which of them the run holds points of, and their numbers packed, read from
    its points as they now stand (an older attempt's points kept included)."""
    from sqlalchemy import and_, select

    from infx.history.packed import pack
    from infx.history.tables import points, run_series, series

    columns = ("config_id", "kind", "variant", "image")
    insert = dialect_insert(conn)
    conn.execute(
        insert(series).on_conflict_do_nothing(index_elements=list(columns)),
        [dict(zip(columns, found, strict=True)) for found in sorted(named)],
    )
    conn.execute(run_series.delete().where(run_series.c.run_id == run_id))
    held = (
        select(series.c.id, points.c.conc, *(points.c[n] for n in NUMBERS))
        .join_from(points, series, and_(*(series.c[c] == points.c[c] for c in columns)))
        .where(points.c.run_id == run_id)
    )
    grouped: dict[int, list[tuple[Any, ...]]] = {}
    for series_id, *point in conn.execute(held):
        grouped.setdefault(series_id, []).append(tuple(point))
    if grouped:
        conn.execute(
            run_series.insert(),
            [
                {"series_id": s, "run_id": run_id, "numbers": pack(found)}
                for s, found in sorted(grouped.items())
            ],
        )


def _unpacked(conn: Connection, run_id: int) -> bool:
    """Whether a series of the run lacks its packed numbers (a row written outside infx):
    storing the run again, unchanged, mends it."""
    from sqlalchemy import select

    from infx.history.tables import run_series

    lacking = select(run_series.c.series_id).where(
        run_series.c.run_id == run_id, run_series.c.numbers.is_(None)
    )
    return conn.execute(lacking.limit(1)).first() is not None


def _mark_reused(conn: Connection, pr_run: int, main_run: int) -> None:
    """The pull request run `pr_run`'s verdicts (the verdicts table, `infx.history.verdicts`):
    its sweep became main run `main_run`'s."""
    from infx.history.tables import verdicts

    conn.execute(verdicts.update().where(verdicts.c.run_id == pr_run).values(reused_by=main_run))


def _select_config_ids(conn: Connection, keys: list[str]) -> dict[str, int]:
    from sqlalchemy import select

    from infx.history.tables import configs

    ids: dict[str, int] = {}
    for chunk in chunks(keys):
        query = select(configs.c.key, configs.c.id).where(configs.c.key.in_(chunk))
        ids.update((key, config_id) for key, config_id in conn.execute(query))
    return ids


def open_history(url: str | None = None) -> History:
    """The history at `url`, or where INFX_HISTORY_URL, the `history` setting or the default
    (.infx/history.sqlite in the current repository) say; migrated to the newest schema.
    Relative paths are read from the repository's root."""

    try:
        root = git.root()
    except GitError:
        root = Path.cwd()
    where = location(
        url, os.environ, settings.load(root) if url is None else settings.Settings(), root
    )
    made = engine(where)
    try:
        migrate(made, where)
    except BaseException:
        made.dispose()
        raise
    return History(made, where)

"""Receipts beside the rows: the run receipt (and, for a reused merge, the merge receipt)
that vouch for a main run's results, stored in the `receipts` table and read back for
`infx results provenance`.

`store_receipts` is the one way in: the receipts are plain JSON objects (checked against
schemas/receipt.schema.json and against the issuer's identity by the caller), stored as
they were sealed, keyed by the main run whose rows they vouch for and their role (`run`:
the issuer's receipt of the run that measured them; `merge`: a reused merge's receipt;
`main`: the issuer's receipt of the main run that republished them); storing them again
replaces them. A stored run's points are read back with it, so provenance can recompute
what the issuer sealed of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infx.errors import ResultsError
from infx.history.database import database_errors, dialect_insert, engine, migrate
from infx.history.rows import now
from infx.matrix.manifest import canonical, digest

# SQLAlchemy, and infx.history.tables built on it, load inside the functions that query
# (start-up time).
if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


@contextmanager
def _connection(url: str, doing: str, write: bool = False) -> Iterator[Connection]:
    made = engine(url)
    try:
        migrate(made, url)
        with database_errors(url, doing), made.connect() as conn:
            if write:
                conn.execution_options(infx_write=True)
            with conn.begin():
                yield conn
    finally:
        made.dispose()


def store_receipts(
    url: str, run_id: int, receipts: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[str]:
    """Store `receipts` ((role, receipt) pairs: run, merge, main) beside main run `run_id`'s
    rows (stored before), one transaction; a role stored already is replaced. Lines saying
    what was stored."""
    from sqlalchemy import select

    from infx.history.tables import receipts as table
    from infx.history.tables import runs

    lines = []
    with _connection(url, "cannot store receipts in", write=True) as conn:
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is None:
            raise ResultsError(f"run {run_id} is not in the history: store its results first")
        for kind, doc in receipts:
            source = doc["run"]["id"] if doc["kind"] == "run" else doc["source"]["run"]
            values = {
                "source_run": int(source),
                "digest": digest(doc),
                "data": canonical(doc).decode(),
                "stored_at": now(),
            }
            insert = dialect_insert(conn)
            conn.execute(
                insert(table)
                .values(run_id=run_id, kind=kind, **values)
                .on_conflict_do_update(index_elements=["run_id", "kind"], set_=values)
            )
            lines.append(f"{kind} receipt of run {source} stored for run {run_id}")
    return lines


@dataclass(frozen=True)
class Stored:
    """A main run as the history holds it, with the receipts beside its rows."""

    run: dict[str, Any]  # id, attempt, sha, ref, url, created_at, reused_from
    receipts: dict[str, dict[str, Any]]  # kind -> receipt
    digests: dict[str, str]  # kind -> digest stored
    point: dict[str, Any] | None = None  # the point asked for: key, kind, conc, data
    # Every point of the run as stored: (config key, kind, conc, variant, data).
    points: tuple[tuple[str, str, int, str, str], ...] = ()


def stored_run(url: str, run_id: int) -> Stored | None:
    """Main run `run_id` with its receipts (None: not in the history)."""
    with _connection(url, "cannot read") as conn:
        return _stored(conn, run_id)


def stored_point(url: str, key: str, conc: int) -> Stored | None:
    """The newest main run holding the point (config `key`, concurrency `conc`), with its
    receipts and the point (None: no run holds it)."""
    from sqlalchemy import select

    from infx.history.tables import configs, points, runs

    with _connection(url, "cannot read") as conn:
        found = conn.execute(
            select(points.c.run_id, points.c.kind, points.c.data)
            .join(configs, configs.c.id == points.c.config_id)
            .join(runs, runs.c.id == points.c.run_id)
            .where(configs.c.key == key, points.c.conc == conc)
            .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        ).first()
        if found is None:
            return None
        stored = _stored(conn, found.run_id)
        assert stored is not None  # the point's run exists (foreign key)
        point = {"key": key, "kind": found.kind, "conc": conc, "data": json.loads(found.data)}
        return Stored(stored.run, stored.receipts, stored.digests, point, stored.points)


def _stored(conn: Connection, run_id: int) -> Stored | None:
    from sqlalchemy import select

    from infx.history.tables import configs, points, receipts, runs

    row = conn.execute(select(runs).where(runs.c.id == run_id)).first()
    if row is None:
        return None
    run = {
        "id": row.id,
        "attempt": row.attempt,
        "sha": row.sha,
        "ref": row.ref,
        "url": row.url,
        "created_at": row.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "reused_from": row.reused_from,
    }
    found = conn.execute(select(receipts).where(receipts.c.run_id == run_id)).all()
    stored = conn.execute(
        select(configs.c.key, points.c.kind, points.c.conc, points.c.variant, points.c.data)
        .join(configs, configs.c.id == points.c.config_id)
        .where(points.c.run_id == run_id)
    ).all()
    return Stored(
        run,
        {r.kind: json.loads(r.data) for r in found},
        {r.kind: r.digest for r in found},
        points=tuple((p.key, p.kind, p.conc, p.variant, p.data) for p in stored),
    )

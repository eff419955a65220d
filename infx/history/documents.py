"""Main's runs as results documents (every row, its JSON parsed): what `infx results
changes`, the site and a comparison's callers that want rows read. A comparison reads
numbers instead (`infx.history.frames`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from infx.history import rows as records
from infx.results.table.rows import Identity, Row, Table

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

CHUNK = 500  # keys per IN (...): well under SQLite's and PostgreSQL's parameter limits


def chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def newest(conn: Connection, limit: int) -> list[Table]:
    """Every row of the newest `limit` runs holding any point."""
    from sqlalchemy import exists, select

    from infx.history.tables import configs, points, runs

    query = (
        select(runs.c.id)
        .where(exists().where(points.c.run_id == runs.c.id))
        .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        .limit(limit)
    )
    run_ids = [r for (r,) in conn.execute(query)]
    if not run_ids:
        return []
    stored = conn.execute(
        select(
            points.c.run_id,
            points.c.config_id,
            points.c.kind,
            points.c.conc,
            points.c.variant,
            points.c.data,
        ).where(points.c.run_id.in_(run_ids))
    ).all()
    identities = {
        config_id: (key, identity)
        for ids in chunks(sorted({p[1] for p in stored}))
        for config_id, key, identity in conn.execute(
            select(configs.c.id, configs.c.key, configs.c.identity).where(configs.c.id.in_(ids))
        )
    }
    return _documents(conn, list(stored), identities)


def windows(conn: Connection, limit: int, keys: list[str]) -> list[Table]:
    """Each config's newest `limit` runs, read in one query per 500 configs: a window
    function numbers each (config, kind)'s runs newest first."""
    from sqlalchemy import and_, func, select

    from infx.history.tables import configs, points, runs

    identities: dict[int, tuple[str, Identity]] = {}
    for chunk in chunks(keys):
        query = select(configs.c.id, configs.c.key, configs.c.identity)
        for config_id, key, identity in conn.execute(query.where(configs.c.key.in_(chunk))):
            identities[config_id] = (key, identity)
    stored: list[Any] = []
    for ids in chunks(sorted(identities)):  # one query, unless over 500 configs
        held = (
            select(points.c.run_id, points.c.config_id, points.c.kind)
            .where(points.c.config_id.in_(ids))
            .distinct()
            .subquery()
        )
        rank = (
            func.row_number()
            .over(
                partition_by=(held.c.config_id, held.c.kind),
                order_by=(runs.c.created_at.desc(), runs.c.id.desc()),
            )
            .label("rank")
        )
        ranked = (
            select(held.c.run_id, held.c.config_id, held.c.kind, rank)
            .join_from(held, runs, held.c.run_id == runs.c.id)
            .subquery()
        )
        query = select(
            points.c.run_id,
            points.c.config_id,
            points.c.kind,
            points.c.conc,
            points.c.variant,
            points.c.data,
        ).join(
            ranked,
            and_(
                points.c.run_id == ranked.c.run_id,
                points.c.config_id == ranked.c.config_id,
                points.c.kind == ranked.c.kind,
                ranked.c.rank <= limit,
            ),
        )
        stored.extend(conn.execute(query).all())  # one fetch, not one per row
    return _documents(conn, stored, identities)


def _documents(
    conn: Connection, stored: list[Any], identities: dict[int, tuple[str, Identity]]
) -> list[Table]:
    """Stored points (run, config, kind, conc, variant, data) as the documents of their
    runs, oldest first."""
    from sqlalchemy import select

    from infx.history.tables import runs

    if not stored:
        return []
    facts: dict[int, records.RunFacts] = {}
    for ids in chunks(sorted({p[0] for p in stored})):
        for r in conn.execute(select(runs).where(runs.c.id.in_(ids))):
            facts[r.id] = records.RunFacts(
                id=r.id,
                attempt=r.attempt,
                sha=r.sha,
                ref=r.ref,
                url=r.url,
                created_at=r.created_at,
                reused_from=r.reused_from,
            )
    rows = records.rows([(identities[p[1]][1], p[3], p[5]) for p in stored])
    keyed: dict[int, list[tuple[tuple[str, str, int, str], Row]]] = {run_id: [] for run_id in facts}
    for (run_id, config_id, kind, conc, variant, _), row in zip(stored, rows, strict=True):
        keyed[run_id].append(((kind, identities[config_id][0], conc, variant), row))
    order = sorted(facts.values(), key=lambda f: (f.created_at, f.id))
    return [records.document(f, keyed[f.id]) for f in order]

"""Read main's history for the site: every run, config and point, in one snapshot, straight
from the history's tables (infx/history/tables.py), keeping only the numbers the site shows.

SQLAlchemy loads here, never at start-up.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from infx.errors import UsageError
from infx.history.database import database_errors, engine, location, migrate
from infx.results.table.keys import config_label
from infx.results.table.rows import Identity
from infx.settings import Settings
from infx.site.model import ConfigHistory, HistoryFacts, PointSeries, Run, vouched

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.engine import Connection

_STREAM = 5_000  # points fetched per round trip


def slug(kind: str, key: str) -> str:
    """A config's page name: short, URL-safe, the same in every build."""
    return hashlib.sha1(f"{kind}|{key}".encode()).hexdigest()[:12]


def _stamp(value: datetime) -> str:
    text = value.isoformat(timespec="seconds")
    return text if text.endswith("Z") else text.split("+", 1)[0] + "Z"


def history_url(where: str | None, settings: Settings, root: Path) -> str:
    """`--history` as a database URL (else INFX_HISTORY_URL, the `history` setting, the
    default file under `root`); an SQLite file must exist: a site is never built from a
    history this command would create empty."""
    url = location(where, os.environ, settings, root)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise UsageError(f"history: no SQLite file at {url.removeprefix('sqlite:///')}")
    return url


# The numbers the site shows, read in SQL (no JSON parse per point in Python): metric ->
# key under the row's `metrics`; interactivity is the median's, else the mean's.
_COLUMNS = (
    ("tput_per_gpu", "tput_per_gpu"),
    ("intvty", "median_intvty"),
    ("intvty_mean", "mean_intvty"),
    ("median_ttft", "median_ttft"),
    ("p99_ttft", "p99_ttft"),
    ("median_tpot", "median_tpot"),
    ("p99_tpot", "p99_tpot"),
)


def _metric_columns(conn: Connection) -> list[Any]:
    """One SQL expression per metric: SQLite's json_extract, PostgreSQL's jsonb operators."""
    from sqlalchemy import Float, cast, func, literal_column

    from infx.history.tables import points

    if conn.dialect.name == "postgresql":
        return [
            cast(literal_column(f"(data::jsonb -> 'metrics' ->> '{key}')"), Float)
            for _, key in _COLUMNS
        ]
    return [func.json_extract(points.c.data, f"$.metrics.{key}") for _, key in _COLUMNS]


def _read(conn: Connection) -> tuple[list[Run], list[ConfigHistory]]:
    from sqlalchemy import select

    from infx.history.tables import configs, points, receipts, runs

    stored = conn.execute(select(runs).order_by(runs.c.created_at, runs.c.id)).all()
    kinds: dict[int, set[str]] = {}
    for held in conn.execute(select(receipts.c.run_id, receipts.c.kind)):
        kinds.setdefault(held.run_id, set()).add(held.kind)
    found = [
        Run(
            i,
            r.id,
            r.attempt,
            r.sha,
            r.url,
            _stamp(r.created_at),
            r.reused_from,
            vouched(kinds.get(r.id, set()), r.reused_from),
        )
        for i, r in enumerate(stored)
    ]
    place = {run.id: run.index for run in found}
    identities: dict[int, tuple[str, dict[str, Any]]] = {
        c.id: (c.key, dict(c.identity)) for c in conn.execute(select(configs))
    }
    by_config: dict[tuple[int, str], ConfigHistory] = {}
    query = select(
        points.c.run_id,
        points.c.config_id,
        points.c.kind,
        points.c.conc,
        points.c.image,
        *_metric_columns(conn),
    ).order_by(points.c.config_id, points.c.kind, points.c.conc)
    result = conn.execution_options(yield_per=_STREAM).execute(query)
    for run_id, config_id, kind, conc, image, tput, intvty, mean, *latencies in result:
        config = by_config.get((config_id, kind))
        if config is None:
            key, identity = identities[config_id]
            label = config_label(cast(Identity, identity))  # stored from a checked table
            config = by_config[(config_id, kind)] = ConfigHistory(
                slug(kind, key),
                key,
                kind,
                identity,
                label if kind == "throughput" else f"{label} · {kind}",
            )
        series = config.points.get(conc)
        if series is None:
            series = config.points[conc] = PointSeries(conc)
        series.add(place[run_id], image, (tput, intvty if intvty is not None else mean, *latencies))
    for config in by_config.values():
        for series in config.points.values():
            _oldest_first(series)
    return found, sorted(by_config.values(), key=lambda c: (c.label, c.kind, c.key))


def _oldest_first(series: PointSeries) -> None:
    order = sorted(range(len(series.runs)), key=series.runs.__getitem__)
    if order == list(range(len(order))):
        return
    series.runs = [series.runs[i] for i in order]
    series.images = [series.images[i] for i in order]
    series.values = {m: [v[i] for i in order] for m, v in series.values.items()}


def read_history(url: str) -> HistoryFacts:
    """Every main run of the history at `url` (see `history_url`), with every point."""
    made = engine(url)
    try:
        migrate(made, url)
        with database_errors(url, "cannot read the history"), made.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                runs, configs = _read(conn)
    finally:
        made.dispose()
    return HistoryFacts(tuple(runs), tuple(configs), described(url))


def described(url: str) -> str:
    """What the published site says it was built from: the kind of database, never where it
    lives (a path on the build machine, a PostgreSQL user, host, port or database name)."""
    from sqlalchemy.engine import make_url

    backend = make_url(url).get_backend_name()
    return {"sqlite": "main's SQLite history", "postgresql": "main's PostgreSQL history"}.get(
        backend, "main's history"
    )

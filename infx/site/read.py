"""Read main's history for the site: every run, config and point, in one snapshot, straight
from the history's tables (infx/history/tables.py), keeping only the numbers the site shows.

SQLAlchemy loads here, never at start-up.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.errors import UsageError
from infx.history.database import database_errors, engine, location, migrate, shown
from infx.results.compare import config_label, interactivity
from infx.settings import Settings
from infx.site.model import METRICS, ConfigHistory, HistoryFacts, PointSeries, Run

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


def _metrics(kind: str, data: str) -> dict[str, float | None]:
    if kind != "throughput":
        return {}
    measured = json.loads(data).get("metrics") or {}
    found: dict[str, float | None] = {}
    for metric in METRICS:
        value = interactivity(measured) if metric == "intvty" else measured.get(metric)
        found[metric] = float(value) if isinstance(value, int | float) else None
    return found


def _read(conn: Connection) -> tuple[list[Run], list[ConfigHistory]]:
    from sqlalchemy import select

    from infx.history.tables import configs, points, runs

    stored = conn.execute(select(runs).order_by(runs.c.created_at, runs.c.id)).all()
    found = [
        Run(i, r.id, r.attempt, r.sha, r.url, _stamp(r.created_at), r.reused_from)
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
        points.c.data,
    ).order_by(points.c.config_id, points.c.kind, points.c.conc)
    result = conn.execution_options(yield_per=_STREAM).execute(query)
    for run_id, config_id, kind, conc, image, data in result:
        config = by_config.get((config_id, kind))
        if config is None:
            key, identity = identities[config_id]
            label = config_label({**identity, "conc": 0})
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
        series.add(place[run_id], image, _metrics(kind, data))
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
    return HistoryFacts(tuple(runs), tuple(configs), shown(url))

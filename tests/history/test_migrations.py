"""Released migrations never change, and a database made by any released revision (rows
written as that version of infx wrote them) upgrades to the head revision with its data,
on SQLite and PostgreSQL.

Revision 0001 exists in two shapes: the released file (infx 0.2.0: a point's numbers in
columns of their own) and the file as it was later edited in place (one JSON text per
point, `tests/history/released/edited_0001.py`). Databases of both shapes say `0001`;
before migration 0002 the released ones read as current and every ingest and compare
failed with "no such column: points.data".
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import math
import struct
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from infx.history import open_history
from infx.history.database import HEAD, MIGRATIONS, alembic_config, engine
from infx.results.table.frame import Frame, of_documents
from tests.history.tables import identity, mixed, points, sql, table

VERSIONS = MIGRATIONS / "versions"
# Every migration file, as released. A released migration never changes: a schema change
# is a new file. Add the new file's sha256 here when you add it.
PINNED = {
    "0001_initial.py": "114bd0c05ff670020a13107fca0e984f1d5cdd360a65be98015fdb8ba97247f7",
    "0002_points_data.py": "94931cae3bec2540c952791e38bec39291632c899fa7add0fbaf52f236176831",
    "0003_verdicts.py": "52d301af6712e21f3bcef115bf30ecb10f11b094301f3681d3893b9b2c84578e",
    "0004_receipts.py": "aa457714672c2b92ad7f865dbdc4ca24d85506b4a670fb2ba7ce8f2f1a3d049f",
    "0005_point_numbers.py": "72075070353886f7d41529d3855841aac2dd0dbd07931fc84271d4f0692a4e6a",
    "0006_packed_numbers.py": "8e8adf7bb792cf0d944fbede0b41e242e3eb70b6b1b97c64d685e1a76213a689",
}


def test_released_migrations_never_change() -> None:
    files = {p.name for p in VERSIONS.glob("*.py")}
    assert files == set(PINNED), "pin every migration file's sha256 in PINNED"
    for name, digest in PINNED.items():
        assert hashlib.sha256((VERSIONS / name).read_bytes()).hexdigest() == digest, name


# --- each version's writer, frozen as that version wrote rows ----------------------------

Row = dict[str, Any]


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def _run(doc: dict) -> dict:
    run = doc["run"]
    return {
        "id": run["id"],
        "attempt": run.get("attempt", 1),
        "sha": run["sha"],
        "ref": run["ref"],
        "url": run["url"],
        "created_at": _stamp(run["created_at"]),
        "reused_from": run.get("reused_from"),
        "ingested_at": datetime(2026, 12, 4),
    }


def _key(ident: dict) -> str:
    return json.dumps(ident, sort_keys=True)


def _released_point(row: Row) -> dict:
    """infx 0.2.0 (commit 1db109d): client, source, image, exp_name, fingerprint columns,
    the rest of the recipe, gpus, metrics and accuracy as JSON."""
    columns = {"image": "image", "exp-name": "exp_name", "recipe-fingerprint": "fingerprint"}
    return {
        "client": row["client"],
        "source": row.get("source"),
        **{column: row["recipe"].get(name) for name, column in columns.items()},
        "recipe": {k: v for k, v in row["recipe"].items() if k not in columns},
        "gpus": row["gpus"],
        "metrics": row.get("metrics"),
        "accuracy": row.get("accuracy"),
    }


def _data_point(row: Row) -> dict:
    """From the in-place edit of 0001 on: image, fingerprint, the row less its identity."""
    body = {k: v for k, v in row.items() if k != "identity"}
    return {
        "image": row["recipe"]["image"],
        "fingerprint": row["recipe"].get("recipe-fingerprint"),
        "data": json.dumps(body, separators=(",", ":"), allow_nan=False),
    }


def _variant_point(row: Row) -> dict:
    """0002 on: and the master config that measured the point."""
    return {**_data_point(row), "variant": row["recipe"].get("config-key", "")}


_NUMBERS = (
    "tput_per_gpu",
    "median_ttft",
    "p99_ttft",
    "median_tpot",
    "p99_tpot",
    "median_intvty",
    "mean_intvty",
)


def _numbers_point(row: Row) -> dict:
    """0005 on: and the judged numbers in columns of their own (NULL: not in the row)."""
    metrics = row.get("metrics") or {}
    numbers = {name: float(metrics[name]) if name in metrics else None for name in _NUMBERS}
    return {**_variant_point(row), **numbers}


_SERIES = ("config_id", "kind", "variant", "image")
# 0005 on: the series the points name, and which of them each run holds.
SERIES = [
    f"INSERT INTO series ({', '.join(_SERIES)}) SELECT DISTINCT {', '.join(_SERIES)} FROM points",
    "INSERT INTO run_series (series_id, run_id) SELECT DISTINCT s.id, p.run_id FROM points p "
    "JOIN series s ON " + " AND ".join(f"s.{c} = p.{c}" for c in _SERIES),
]


def _packed_point(row: Row) -> dict:
    """0006 on: as 0005, and `run_series` holds each run's numbers of a series packed."""
    return _numbers_point(row)


def _pack(url: str) -> None:
    """0006's `run_series.numbers`: (conc, *numbers) little-endian float64 rows by conc."""
    joined = " AND ".join(f"s.{c} = p.{c}" for c in _SERIES)
    found = sql(
        url,
        f"SELECT s.id, p.run_id, p.conc, {', '.join(_NUMBERS)} FROM points p "
        f"JOIN series s ON {joined} ORDER BY 1, 2, 3",
    )
    held: dict[tuple[int, int], list[float]] = {}
    for series_id, run_id, *point in found:
        values = [math.nan if v is None else float(v) for v in point]
        held.setdefault((series_id, run_id), []).extend(values)
    from sqlalchemy import text

    update = text("UPDATE run_series SET numbers = :n WHERE series_id = :s AND run_id = :r")
    with engine(url).begin() as conn:
        for (series_id, run_id), values in held.items():
            packed = struct.pack(f"<{len(values)}d", *values)
            conn.execute(update, {"n": packed, "s": series_id, "r": run_id})


def _write(url: str, docs: list[dict], point: Callable[[Row], dict], extra: str = "") -> None:
    from sqlalchemy import JSON, column
    from sqlalchemy import table as sa_table

    runs = sa_table("runs", *(column(c) for c in _run(docs[0])))
    configs = sa_table("configs", column("id"), column("key"), column("identity", JSON))
    ids: dict[str, int] = {}
    stored = []
    for doc in docs:
        for row in doc["rows"]:
            key = _key(identity(row))
            ids.setdefault(key, len(ids) + 1)
            values = point(row)
            base = {
                "run_id": doc["run"]["id"],
                "config_id": ids[key],
                "kind": row["kind"],
                "conc": row["identity"]["conc"],
                "attempt": doc["run"].get("attempt", 1),
            }
            stored.append(base | values)
    json_columns = ("recipe", "gpus", "metrics", "accuracy")
    points_table = sa_table(
        "points",
        *(column(c, JSON) if c in json_columns else column(c) for c in stored[0]),
    )
    with engine(url).begin() as conn:
        conn.execute(runs.insert(), [_run(d) for d in docs])
        identities = {}
        for doc in docs:
            for row in doc["rows"]:
                identities[_key(identity(row))] = identity(row)
        conn.execute(
            configs.insert(),
            [{"id": i, "key": k, "identity": identities[k]} for k, i in ids.items()],
        )
        conn.execute(points_table.insert(), stored)
    if point in (_numbers_point, _packed_point):
        for statement in SERIES:
            sql(url, statement)
    if point is _packed_point:
        _pack(url)
    if extra:
        sql(url, extra)


def _at_revision(url: str, revision: str, module: Path | None = None) -> None:
    """An empty database at `revision`, made by that revision's migration file."""
    from alembic import command

    config = alembic_config()
    with engine(url).connect() as conn:
        config.attributes["connection"] = conn
        with conn.begin():
            if module is None:
                command.upgrade(config, revision)
                return
            from alembic.operations import Operations
            from alembic.runtime.migration import MigrationContext

            spec = importlib.util.spec_from_file_location("edited_0001", module)
            assert spec is not None and spec.loader is not None
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
            with Operations.context(MigrationContext.configure(conn)):
                loaded.upgrade()
            command.stamp(config, revision)


def _docs() -> list[dict]:
    first = table(5000, mixed(1000), minute=0)
    second = table(5001, mixed(1100), minute=10, attempt=2, reused_from=4990)
    keyed = copy.deepcopy(mixed(1200)[:3])
    for row in keyed:
        row["recipe"]["config-key"] = "llama70b-fp8-mi355x-vllm"
    third = table(5002, keyed, minute=20)
    return [first, second, third]


VERDICT = (
    "INSERT INTO verdicts (run_id, attempt, pr, head_sha, verdict, passed, digest, ack_by, "
    "ack_who, ack_at, reused_by, judged_at, document) VALUES (4990, 1, 17, "
    "'dddddddddddddddddddddddddddddddddddddddd', 'regressed', true, 'abc', 'label', 'maint', "
    "'2026-12-04 10:00:00', NULL, '2026-12-04 10:00:00', '{}')"
)
# revision -> (migration file to make the schema with (None: the revision's own), writer,
# the docs it could store, SQL run after)
RELEASED: dict[str, tuple[Path | None, Callable[[Row], dict], int, str]] = {
    "0001": (None, _released_point, 2, ""),
    "0001-edited": (Path(__file__).parent / "released/edited_0001.py", _data_point, 2, ""),
    "0002": (None, _variant_point, 3, ""),
    "0003": (None, _variant_point, 3, VERDICT),
    "0004": (None, _variant_point, 3, VERDICT),
    "0005": (None, _numbers_point, 3, VERDICT),
    "0006": (None, _packed_point, 3, VERDICT),
}


def test_every_revision_has_a_writer() -> None:
    """A new migration adds how its version writes rows to RELEASED."""
    from alembic.script import ScriptDirectory

    revisions = {r.revision for r in ScriptDirectory.from_config(alembic_config()).walk_revisions()}
    assert revisions == {r.split("-")[0] for r in RELEASED}
    assert HEAD in RELEASED


@pytest.mark.parametrize("revision", list(RELEASED))
def test_a_database_of_every_released_revision_upgrades(history_url: str, revision: str) -> None:
    module, writer, count, extra = RELEASED[revision]
    _at_revision(history_url, revision.split("-")[0], module)
    docs = _docs()[:count]
    _write(
        history_url, docs, writer, extra.replace("true", "1") if "sqlite" in history_url else extra
    )
    with open_history(history_url) as history:
        back = history.main_runs()
        assert [d["run"] for d in back] == [d["run"] for d in docs]
        for stored, doc in zip(back, docs, strict=True):
            assert points(stored) == points(doc)
        # What a comparison reads (numbers, series, windows) is what the rows say.
        wanted = [identity(r) for d in docs for r in d["rows"]]
        assert _read(history.main_frame(limit=30, configs=wanted)) == _read(of_documents(docs))
        # Stored again, nothing changes: the converted text is the text ingest writes.
        for doc in docs:
            report = history.ingest(copy.deepcopy(doc))
            assert (report.added, report.replaced, report.unchanged) == (0, 0, len(doc["rows"]))
        stored = sql(history_url, "SELECT series_id, run_id FROM run_series ORDER BY 1, 2")
    # Each ingest keeps `run_series` as the migration made it.
    assert stored == sql(history_url, "SELECT series_id, run_id FROM run_series ORDER BY 1, 2")
    assert sql(history_url, "SELECT version_num FROM alembic_version") == [(HEAD,)]


def _read(frame: Frame) -> tuple[list[dict], list[tuple]]:
    """A frame as its runs and, per point, what it measured and its numbers (None: NaN)."""
    measured = []
    for point in range(len(frame.run)):
        series = frame.series[int(frame.of[point])]
        values = [None if math.isnan(v) else v for v in frame.values[point].tolist()]
        run = frame.runs[int(frame.run[point])]["id"]
        key = _key(series.identity)
        measured.append((run, series.kind, key, series.measured_by, int(frame.conc[point]), values))
    return list(frame.runs), sorted(measured, key=repr)

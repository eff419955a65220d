"""The judged numbers in columns, and which series each run holds.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-14

A comparison read main's history as one JSON text per point: 40,000 parses for a 2,000-row
pull request against 20 runs, and a window query that ranked every (run, config, kind)
the history holds. This migration gives each point the numbers a comparison reads as
columns of their own (throughput per GPU, TTFT and TPOT medians and p99s, interactivity
median and mean; NULL where the row has none, as an accuracy row), filled from `data` as
it stands; adds `series`, one row per (config, kind, variant, image) the points name, and
`run_series`, one row per series a run holds a point of, both filled from the points:
each config's window is then read from `run_series` (a row per run, not per point) and
its points from their columns.

Released migrations never change (tests/history/test_migrations.py pins their sha256).
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

NUMBERS = (
    "tput_per_gpu",
    "median_ttft",
    "p99_ttft",
    "median_tpot",
    "p99_tpot",
    "median_intvty",
    "mean_intvty",
)
_KEY = ("run_id", "config_id", "kind", "conc", "variant")
_SERIES = ("config_id", "kind", "variant", "image")


def _number(value: Any) -> float | None:
    """A metric as its column holds it: a number (never a boolean), else NULL."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _fill_numbers(conn: sa.Connection) -> None:
    """The columns from each point's `data`, one run at a time (memory stays bounded)."""
    points = sa.table("points", *(sa.column(c) for c in (*_KEY, "data", *NUMBERS)))
    update = (
        points.update()
        .where(*(points.c[name] == sa.bindparam(f"b_{name}") for name in _KEY))
        .values({name: sa.bindparam(f"b_{name}_n") for name in NUMBERS})
    )
    run_ids = [r for (r,) in conn.execute(sa.select(points.c.run_id).distinct())]
    for run_id in sorted(run_ids):
        found = conn.execute(
            sa.select(*(points.c[name] for name in _KEY), points.c.data).where(
                points.c.run_id == run_id
            )
        ).all()
        changes = []
        for point in found:
            metrics = json.loads(point.data).get("metrics")
            if not isinstance(metrics, dict):
                continue
            numbers = {f"b_{name}_n": _number(metrics.get(name)) for name in NUMBERS}
            if any(v is not None for v in numbers.values()):
                changes.append({**{f"b_{name}": getattr(point, name) for name in _KEY}, **numbers})
        if changes:
            conn.execute(update, changes)


def upgrade() -> None:
    conn = op.get_bind()
    for name in NUMBERS:
        op.add_column("points", sa.Column(name, sa.Double(), nullable=True))
    op.create_table(
        "series",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("config_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("variant", sa.Text(), nullable=False),
        sa.Column("image", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["config_id"], ["configs.id"], name="fk_series_config_id_configs"),
        sa.PrimaryKeyConstraint("id", name="pk_series"),
        sa.UniqueConstraint(*_SERIES, name="uq_series_config_id_kind_variant_image"),
    )
    op.create_table(
        "run_series",
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_series_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["series_id"], ["series.id"], name="fk_run_series_series_id_series"
        ),
        sa.PrimaryKeyConstraint("series_id", "run_id", name="pk_run_series"),
    )
    op.create_index("ix_run_series_run_id", "run_series", ["run_id"])
    columns = ", ".join(_SERIES)
    conn.exec_driver_sql(
        f"INSERT INTO series ({columns}) SELECT DISTINCT {columns} FROM points ORDER BY {columns}"
    )
    joined = " AND ".join(f"s.{c} = p.{c}" for c in _SERIES)
    conn.exec_driver_sql(
        "INSERT INTO run_series (series_id, run_id) SELECT DISTINCT s.id, p.run_id "
        f"FROM points p JOIN series s ON {joined}"
    )
    _fill_numbers(conn)


def downgrade() -> None:
    raise NotImplementedError("the history's schema only moves forward")

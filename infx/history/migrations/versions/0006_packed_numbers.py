"""Each run's numbers of a series in one value.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05

A comparison read its 40,000 points as 400,000 values of the points' number columns, each
built by the driver on its own: a third of a second of a command meant to take one.
`run_series.numbers` holds a run's points of one series (conc, then the numbers of 0005)
as little-endian float64 rows ordered by conc, NaN where a column is NULL; filled here from
the points as they stand, and written by every ingest from then on.

Released migrations never change (tests/history/test_migrations.py pins their sha256).
"""

import struct

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
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
_SERIES = ("config_id", "kind", "variant", "image")
_NAN = float("nan")


def _fill(conn: sa.Connection) -> None:
    """`numbers` of every (series, run), one run at a time (memory stays bounded)."""
    joined = " AND ".join(f"s.{c} = p.{c}" for c in _SERIES)
    columns = ", ".join(f"p.{name}" for name in NUMBERS)
    select = sa.text(
        f"SELECT s.id, p.conc, {columns} FROM points p JOIN series s ON {joined} "
        "WHERE p.run_id = :run ORDER BY s.id, p.conc"
    )
    update = sa.text(
        "UPDATE run_series SET numbers = :numbers WHERE series_id = :series AND run_id = :run"
    ).bindparams(sa.bindparam("numbers", type_=sa.LargeBinary()))
    run_ids = sorted(r for (r,) in conn.exec_driver_sql("SELECT DISTINCT run_id FROM run_series"))
    for run_id in run_ids:
        held: dict[int, list[float]] = {}
        for series_id, *point in conn.execute(select, {"run": run_id}):
            held.setdefault(series_id, []).extend(_NAN if v is None else float(v) for v in point)
        changes = [
            {"numbers": struct.pack(f"<{len(values)}d", *values), "series": s, "run": run_id}
            for s, values in held.items()
        ]
        if changes:
            conn.execute(update, changes)


def upgrade() -> None:
    op.add_column("run_series", sa.Column("numbers", sa.LargeBinary(), nullable=True))
    _fill(op.get_bind())


def downgrade() -> None:
    raise NotImplementedError("the history's schema only moves forward")

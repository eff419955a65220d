"""Points as one JSON text, and a variant per point.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-05

Two kinds of database stand at revision 0001. The released 0001 (infx 0.2.0) kept a
point's numbers in columns of their own (client, source, exp_name, recipe, gpus, metrics,
accuracy); the 0001 file was later edited in place to keep them as one JSON text (`data`),
and databases created after that edit already have it. This migration reads which one it
has: a released database gets `data` filled from its columns (the row less its identity,
in the order `infx results collect` writes it) and those columns dropped; an edited one
has nothing to convert. Both then get `variant`, part of a point's key: the master config
the point was measured for (a row's `recipe.config-key`), so that two configs measuring
the same identity (InferenceX's `...-disagg-mtp` and `...-disagg-8k1k-mtp`) are two points
of one run; empty for a row without one.

Released migrations never change (tests/history/test_migrations.py pins their sha256).
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_RELEASED = ("client", "source", "exp_name", "recipe", "gpus", "metrics", "accuracy")
_KEY = ("run_id", "config_id", "kind", "conc")


def _released_points() -> sa.TableClause:
    return sa.table(
        "points",
        *(sa.column(name) for name in _KEY),
        sa.column("client", sa.String()),
        sa.column("source", sa.Text()),
        sa.column("image", sa.Text()),
        sa.column("exp_name", sa.Text()),
        sa.column("fingerprint", sa.String()),
        sa.column("recipe", sa.JSON()),
        sa.column("gpus", sa.JSON()),
        sa.column("metrics", sa.JSON()),
        sa.column("accuracy", sa.JSON()),
        sa.column("data", sa.Text()),
    )


def _data(point: Any) -> str:
    """The row less its identity, as infx 0.2.0's `rows.row` rebuilt it and as `collect`
    orders it: kind, client, source, recipe (image, exp-name, fingerprint, the rest), gpus,
    metrics or accuracy."""
    body: dict[str, Any] = {"kind": point.kind, "client": point.client}
    if point.source is not None:
        body["source"] = point.source
    recipe: dict[str, Any] = {"image": point.image, "exp-name": point.exp_name}
    if point.fingerprint is not None:
        recipe["recipe-fingerprint"] = point.fingerprint
    recipe.update(point.recipe or {})
    body["recipe"] = recipe
    body["gpus"] = point.gpus
    if point.metrics is not None:
        body["metrics"] = point.metrics
    if point.accuracy is not None:
        body["accuracy"] = point.accuracy
    return json.dumps(body, separators=(",", ":"), allow_nan=False)


def _fill_data(conn: sa.Connection) -> None:
    """`data` from the released columns, one run at a time (a run is 2,000 points at most
    in practice: memory stays bounded on a history of hundreds of runs)."""
    points = _released_points()
    update = (
        points.update()
        .where(*(points.c[name] == sa.bindparam(f"b_{name}") for name in _KEY))
        .values(data=sa.bindparam("b_data"))
    )
    run_ids = [r for (r,) in conn.execute(sa.select(points.c.run_id).distinct())]
    for run_id in sorted(run_ids):
        found = conn.execute(sa.select(points).where(points.c.run_id == run_id)).all()
        conn.execute(
            update,
            [
                {**{f"b_{name}": getattr(p, name) for name in _KEY}, "b_data": _data(p)}
                for p in found
            ],
        )


def upgrade() -> None:
    conn = op.get_bind()
    columns = {c["name"] for c in sa.inspect(conn).get_columns("points")}
    released = "metrics" in columns and "data" not in columns
    if released:
        op.add_column("points", sa.Column("data", sa.Text(), nullable=True))
        _fill_data(conn)
    with op.batch_alter_table("points") as batch:
        if released:
            for name in _RELEASED:
                batch.drop_column(name)
            batch.alter_column("data", existing_type=sa.Text(), nullable=False)
        batch.add_column(sa.Column("variant", sa.Text(), server_default="", nullable=False))
        batch.drop_constraint("pk_points", type_="primary")
        batch.create_primary_key("pk_points", [*_KEY, "variant"])


def downgrade() -> None:
    raise NotImplementedError("the history's schema only moves forward")

"""The first schema: runs, configs, points.

Revision ID: 0001
Revises:
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("sha", sa.String(length=40), nullable=False),
        sa.Column("ref", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("reused_from", sa.BigInteger(), nullable=True),
        sa.Column("ingested_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_created_at_id", "runs", ["created_at", "id"])
    op.create_table(
        "configs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("identity", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_configs"),
        sa.UniqueConstraint("key", name="uq_configs_key"),
    )
    op.create_table(
        "points",
        sa.Column("run_id", sa.BigInteger(), nullable=False),
        sa.Column("config_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("conc", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("client", sa.String(length=32), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("image", sa.Text(), nullable=False),
        sa.Column("exp_name", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=True),
        sa.Column("recipe", sa.JSON(), nullable=False),
        sa.Column("gpus", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=True),
        sa.Column("accuracy", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_points_run_id_runs"),
        sa.ForeignKeyConstraint(["config_id"], ["configs.id"], name="fk_points_config_id_configs"),
        sa.PrimaryKeyConstraint("run_id", "config_id", "kind", "conc", name="pk_points"),
    )
    op.create_index("ix_points_config_id_run_id", "points", ["config_id", "run_id"])


def downgrade() -> None:
    op.drop_index("ix_points_config_id_run_id", table_name="points")
    op.drop_table("points")
    op.drop_table("configs")
    op.drop_index("ix_runs_created_at_id", table_name="runs")
    op.drop_table("runs")

"""Receipts beside the rows: what vouches for each main run's results.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-10
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "receipts",
        sa.Column("run_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("source_run", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(length=71), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("stored_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_receipts_run_id_runs"),
        sa.PrimaryKeyConstraint("run_id", "kind", name="pk_receipts"),
    )


def downgrade() -> None:
    op.drop_table("receipts")

"""Verdicts: one row per judged pull request run.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-05

`infx results compare --pr N` writes the verdict it reached for a run attempt of a pull
request's sweep (its head, verdict, gate, the digest an acknowledgement binds to, who
acknowledged it and when, and the verdict document itself); the ingest of a main run
that republished that sweep marks it reused. The results site's verdict page reads it.

Released migrations never change (tests/history/test_migrations.py pins their sha256).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "verdicts",
        sa.Column("run_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("pr", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(length=40), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("ack_by", sa.String(length=16), nullable=True),
        sa.Column("ack_who", sa.Text(), nullable=True),
        sa.Column("ack_at", sa.DateTime(), nullable=True),
        sa.Column("reused_by", sa.BigInteger(), nullable=True),
        sa.Column("judged_at", sa.DateTime(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "attempt", name="pk_verdicts"),
    )
    op.create_index("ix_verdicts_pr", "verdicts", ["pr"])


def downgrade() -> None:
    raise NotImplementedError("the history's schema only moves forward")

"""One hourly rollup row per tool version (its calls counted by status in a JSON object)
instead of one per version and status: a week's statistics read a third of the rows.
Rollups are derived data, so the old ones are dropped and rolled up again on first use.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("call_rollup")
    op.execute("DELETE FROM rolled_hour")
    op.create_table(
        "call_rollup",
        sa.Column("hour", sa.Integer(), primary_key=True),
        sa.Column("tool_name", sa.String(), primary_key=True),
        sa.Column("tool_version", sa.String(), primary_key=True),
        *_totals(),
        sa.Column("statuses", sa.JSON(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("call_rollup")
    op.execute("DELETE FROM rolled_hour")
    op.create_table(
        "call_rollup",
        sa.Column("hour", sa.Integer(), primary_key=True),
        sa.Column("tool_name", sa.String(), primary_key=True),
        sa.Column("tool_version", sa.String(), primary_key=True),
        sa.Column("status", sa.String(), primary_key=True),
        *_totals(),
    )


def _totals() -> list[sa.Column[object]]:
    return [
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("timed", sa.Integer(), nullable=False),
        sa.Column("sum_ms", sa.Float(), nullable=False),
        sa.Column("min_ms", sa.Float(), nullable=True),
        sa.Column("max_ms", sa.Float(), nullable=True),
        sa.Column("waited", sa.Integer(), nullable=False),
        sa.Column("sum_wait_ms", sa.Float(), nullable=False),
        sa.Column("metered", sa.Integer(), nullable=False),
        sa.Column("sum_cpu_s", sa.Float(), nullable=False),
        sa.Column("max_rss_bytes", sa.BigInteger(), nullable=True),
        sa.Column("histogram", sa.JSON(), nullable=True),
    ]

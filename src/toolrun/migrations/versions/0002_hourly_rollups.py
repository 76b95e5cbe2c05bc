"""Hourly rollups of the call history (with their lock), indexes for statistics and for
an agent's newest calls, and 64-bit byte counts (PostgreSQL's INTEGER stops at 2 GiB).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("call_history") as table:  # SQLite: a copy of the table
        table.alter_column("peak_rss_bytes", type_=sa.BigInteger(), existing_nullable=True)
        table.alter_column("output_bytes", type_=sa.BigInteger(), existing_nullable=True)
    op.drop_index("ix_call_history_agent_id", table_name="call_history")
    op.create_index(
        "ix_call_history_agent_newest", "call_history", ["agent_id", "queued_at", "call_id"]
    )
    op.create_index("ix_call_history_finished", "call_history", ["finished_at"])
    op.create_index("ix_call_history_tool_finished", "call_history", ["tool_name", "finished_at"])
    op.create_table(
        "call_rollup",
        sa.Column("hour", sa.Integer(), primary_key=True),
        sa.Column("tool_name", sa.String(), primary_key=True),
        sa.Column("tool_version", sa.String(), primary_key=True),
        sa.Column("status", sa.String(), primary_key=True),
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
    )
    op.create_table(
        "rolled_hour",
        sa.Column("hour", sa.Integer(), primary_key=True),
        sa.Column("rolled_at", sa.Float(), nullable=False),
    )
    lock = op.create_table(
        "rollup_lock",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("taken_at", sa.Float(), nullable=False),
    )
    op.bulk_insert(lock, [{"id": 1, "taken_at": 0.0}])


def downgrade() -> None:
    op.drop_table("rollup_lock")
    op.drop_table("rolled_hour")
    op.drop_table("call_rollup")
    op.drop_index("ix_call_history_tool_finished", table_name="call_history")
    op.drop_index("ix_call_history_finished", table_name="call_history")
    op.drop_index("ix_call_history_agent_newest", table_name="call_history")
    op.create_index("ix_call_history_agent_id", "call_history", ["agent_id"])
    with op.batch_alter_table("call_history") as table:
        table.alter_column("peak_rss_bytes", type_=sa.Integer(), existing_nullable=True)
        table.alter_column("output_bytes", type_=sa.Integer(), existing_nullable=True)

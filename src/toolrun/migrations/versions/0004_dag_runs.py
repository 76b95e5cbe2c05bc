"""Runs of DAG plans and the state of their nodes.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dag_runs",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_dag_runs_agent_id", "dag_runs", ["agent_id"])
    op.create_index("ix_dag_runs_status", "dag_runs", ["status"])
    op.create_table(
        "dag_nodes",
        sa.Column("run_id", sa.String(), sa.ForeignKey("dag_runs.id"), primary_key=True),
        sa.Column("node_id", sa.String(), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("call_id", sa.String(), nullable=True),
        sa.Column("tool_version", sa.String(), nullable=True),
        sa.Column("arguments", sa.JSON(), nullable=True),
        sa.Column("output", sa.JSON(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("dispatched_at", sa.Float(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("not_before", sa.Float(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("dag_nodes")
    op.drop_index("ix_dag_runs_status", table_name="dag_runs")
    op.drop_index("ix_dag_runs_agent_id", table_name="dag_runs")
    op.drop_table("dag_runs")

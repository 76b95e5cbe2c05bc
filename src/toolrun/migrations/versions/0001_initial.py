"""The schema toolrun had before it used migrations: calls, agents, approvals, security.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("ceiling", sa.String(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=True),
        sa.Column("pins", sa.JSON(), nullable=True),
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_agents_name", "agents", ["name"], unique=True)
    op.create_index("ix_agents_token_hash", "agents", ["token_hash"], unique=True)

    op.create_table(
        "approval_rules",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("agent_name", sa.String(), nullable=True),
        sa.Column("command", sa.String(), nullable=True),
        sa.Column("arguments", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_approval_rules_tool_name", "approval_rules", ["tool_name"])

    op.create_table(
        "approvals",
        sa.Column("call_id", sa.String(), primary_key=True),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("agent_name", sa.String(), nullable=True),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("tool_version", sa.String(), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("policy", sa.String(), nullable=False),
        sa.Column("risk", sa.String(), nullable=False),
        sa.Column("warning", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("decided_at", sa.Float(), nullable=True),
        sa.Column("decided_by", sa.String(), nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
    )
    op.create_index("ix_approvals_expires_at", "approvals", ["expires_at"])
    op.create_index("ix_approvals_status", "approvals", ["status"])

    op.create_table(
        "call_history",
        sa.Column("call_id", sa.String(), primary_key=True),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("tool_version", sa.String(), nullable=True),
        sa.Column("arguments", sa.JSON(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("queued_at", sa.Float(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("execution_time_ms", sa.Float(), nullable=True),
        sa.Column("queue_wait_ms", sa.Float(), nullable=True),
        sa.Column("worker", sa.String(), nullable=True),
        sa.Column("deliveries", sa.Integer(), nullable=True),
        sa.Column("cpu_s", sa.Float(), nullable=True),
        sa.Column("peak_rss_bytes", sa.Integer(), nullable=True),
        sa.Column("output_bytes", sa.Integer(), nullable=True),
        sa.Column("error_type", sa.String(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("traceback", sa.Text(), nullable=True),
        sa.Column("approved_by", sa.String(), nullable=True),
    )
    op.create_index("ix_call_history_agent_id", "call_history", ["agent_id"])
    op.create_index("ix_call_history_newest", "call_history", ["queued_at", "call_id"])
    op.create_index("ix_call_history_status", "call_history", ["status"])
    op.create_index("ix_call_history_tool_newest", "call_history", ["tool_name", "queued_at"])

    op.create_table(
        "security_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("call_id", sa.String(), nullable=True),
        sa.Column("tool_name", sa.String(), nullable=True),
        sa.Column("target", sa.String(), nullable=True),
        sa.Column("reason", sa.String(), nullable=False),
    )
    op.create_index("ix_security_events_at", "security_events", ["at"])
    op.create_index("ix_security_events_kind", "security_events", ["kind"])


def downgrade() -> None:
    for table in ("security_events", "call_history", "approvals", "approval_rules", "agents"):
        op.drop_table(table)

"""Tool selection: feedback on calls, and the operators' whitelist and blacklist.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "call_feedback",
        sa.Column("call_id", sa.String(), primary_key=True),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_call_feedback_tool_name", "call_feedback", ["tool_name"])
    op.create_table(
        "tool_marks",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("until", sa.Float(), nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("created_by", sa.String(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_tool_marks_kind", "tool_marks", ["kind"])
    op.create_index("ix_tool_marks_tool_name", "tool_marks", ["tool_name"])


def downgrade() -> None:
    op.drop_index("ix_tool_marks_tool_name", table_name="tool_marks")
    op.drop_index("ix_tool_marks_kind", table_name="tool_marks")
    op.drop_table("tool_marks")
    op.drop_index("ix_call_feedback_tool_name", table_name="call_feedback")
    op.drop_table("call_feedback")

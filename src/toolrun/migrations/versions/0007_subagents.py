"""Sub-agents: definitions registered through the API, and history rows that say which
sub-agent made a call and for which Task call.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "subagents",
        sa.Column("name", sa.String(), primary_key=True),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("registered_at", sa.Float(), nullable=False),
        sa.Column("registered_by", sa.String(), nullable=True),
    )
    with op.batch_alter_table("call_history") as table:
        table.add_column(sa.Column("parent_call_id", sa.String(), nullable=True))
        table.add_column(sa.Column("subagent", sa.String(), nullable=True))
    op.create_index("ix_call_history_parent_call_id", "call_history", ["parent_call_id"])


def downgrade() -> None:
    op.drop_index("ix_call_history_parent_call_id", table_name="call_history")
    with op.batch_alter_table("call_history") as table:
        table.drop_column("subagent")
        table.drop_column("parent_call_id")
    op.drop_table("subagents")

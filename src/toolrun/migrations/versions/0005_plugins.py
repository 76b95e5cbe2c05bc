"""Registered plugins and their modules (stored once by content hash), and warnings for
agents (a plugin they used was removed).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plugin_modules",
        sa.Column("digest", sa.String(), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("stored_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "plugins",
        sa.Column("name", sa.String(), primary_key=True),
        sa.Column("version", sa.String(), primary_key=True),
        sa.Column("digest", sa.String(), sa.ForeignKey("plugin_modules.digest"), nullable=False),
        sa.Column("descriptor", sa.JSON(), nullable=False),
        sa.Column("workspace", sa.String(), nullable=False),
        sa.Column("registered_at", sa.Float(), nullable=False),
        sa.Column("registered_by", sa.String(), nullable=True),
        sa.Column("removed_at", sa.Float(), nullable=True),
    )
    op.create_index("ix_plugins_removed_at", "plugins", ["removed_at"])
    op.create_table(
        "agent_warnings",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("message", sa.String(), nullable=False),
    )
    op.create_index("ix_agent_warnings_agent_id", "agent_warnings", ["agent_id"])


def downgrade() -> None:
    op.drop_index("ix_agent_warnings_agent_id", table_name="agent_warnings")
    op.drop_table("agent_warnings")
    op.drop_index("ix_plugins_removed_at", table_name="plugins")
    op.drop_table("plugins")
    op.drop_table("plugin_modules")

"""External MCP servers imported into the registry (the MCP gateway).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_servers",
        sa.Column("name", sa.String(), primary_key=True),
        sa.Column("command", sa.JSON(), nullable=True),
        sa.Column("env", sa.JSON(), nullable=False),
        sa.Column("url", sa.String(), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("permission", sa.String(), nullable=False),
        sa.Column("time_limit_s", sa.Float(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("imported_at", sa.Float(), nullable=False),
        sa.Column("imported_by", sa.String(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("mcp_servers")

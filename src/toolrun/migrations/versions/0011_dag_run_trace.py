"""A DAG run's trace context (W3C headers, null: not traced): its nodes' spans join it.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dag_runs") as batch:
        batch.add_column(sa.Column("trace", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("dag_runs") as batch:
        batch.drop_column("trace")

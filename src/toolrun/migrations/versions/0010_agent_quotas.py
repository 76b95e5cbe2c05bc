"""Agent quotas: calls per second, bursts, calls open and calls waiting (null: default).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

COLUMNS = (
    ("rate_per_s", sa.Float()),
    ("burst", sa.Integer()),
    ("max_in_flight", sa.Integer()),
    ("max_queued", sa.Integer()),
)


def upgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        for name, kind in COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        for name, _ in COLUMNS:
            batch.drop_column(name)

"""Alembic's entry point: migrations run on the connection `toolrun.database` hands over."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from toolrun.database import import_tables

import_tables()
connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    render_as_batch=True,  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()

"""The database: one engine per process, tables created on first use, a liveness probe.

SQLite (the embedded default) runs in WAL mode with a busy timeout, so the API and the
workers, separate processes, can write side by side. PostgreSQL is used as given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import SQLModel

CONNECT_TIMEOUT_S = 2
SQLITE_BUSY_TIMEOUT_S = 10


def open_database(url: str) -> Engine:
    """An engine for `url` with every toolrun table created.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: the database does not answer.
    """
    engine = create_database_engine(url)
    create_tables(engine)
    return engine


def create_tables(engine: Engine) -> None:
    """Create the toolrun tables that do not exist yet."""
    # The table modules register themselves on SQLModel.metadata when imported.
    from toolrun.history import records  # noqa: F401, PLC0415
    from toolrun.permissions import agents, inbox, rules, security_log  # noqa: F401, PLC0415

    SQLModel.metadata.create_all(engine)


def create_database_engine(url: str) -> Engine:
    """An engine for `url`; SQLite files get their directory and WAL mode."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = sqlalchemy.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
        event.listen(engine, "connect", _sqlite_wal)
        return engine
    return sqlalchemy.create_engine(
        url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
    )


def _sqlite_wal(connection: Any, record: object) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def check_database(engine: Engine) -> None:
    """Raises sqlalchemy.exc.SQLAlchemyError when the database does not answer."""
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text("SELECT 1"))

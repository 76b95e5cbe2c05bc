"""The API's view of the database: an engine and a liveness probe for /healthz."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy
from sqlalchemy.engine import Engine, make_url

CONNECT_TIMEOUT_S = 2


def create_database_engine(url: str) -> Engine:
    """An engine for `url`; SQLite files get their directory and WAL mode."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        return sqlalchemy.create_engine(url, connect_args={"timeout": CONNECT_TIMEOUT_S})
    return sqlalchemy.create_engine(
        url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
    )


def check_database(engine: Engine) -> None:
    """Raises sqlalchemy.exc.SQLAlchemyError when the database does not answer."""
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text("SELECT 1"))

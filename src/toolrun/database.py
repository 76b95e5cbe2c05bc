"""The database: one engine per process, the schema migrated by Alembic, a liveness probe.

SQLite (the embedded default) runs in WAL mode with a busy timeout, so the API and the
workers, separate processes, can write side by side. PostgreSQL is used as given.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy
from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url

CONNECT_TIMEOUT_S = 2
SQLITE_BUSY_TIMEOUT_S = 10
MIGRATIONS = Path(__file__).parent / "migrations"
FIRST_REVISION = "0001"
LOCK_KEY = 0x746F6F6C72756E  # "toolrun": the advisory lock of schema migrations

log = logging.getLogger(__name__)
# URL → the process that migrated it. A process forked from that one (a worker's pool
# process; they start in numbers) finds the schema current and does not migrate again.
_migrated_by: dict[str, int] = {}


def open_database(url: str) -> Engine:
    """An engine for `url` with the schema migrated to the newest revision (by this
    process, or by the one it was forked from).

    Raises:
        sqlalchemy.exc.SQLAlchemyError: the database does not answer.
    """
    engine = create_database_engine(url)
    migrator = _migrated_by.get(url)
    if migrator is None or migrator == os.getpid():
        migrate(engine)
        _migrated_by[url] = os.getpid()
    return engine


def prepare_to_fork(url: str) -> None:
    """In a process that will fork children while its own threads work (a Celery worker):
    import the tables' modules and configure their mappers now, in one thread, so that no
    child is forked while a thread holds the ORM's or an import's lock (the child would
    wait on it forever); and migrate the schema, so the children need not. A database that
    does not answer yet is left to whoever opens it later."""
    from sqlalchemy.exc import SQLAlchemyError  # noqa: PLC0415
    from sqlalchemy.orm import configure_mappers  # noqa: PLC0415

    import_tables()
    configure_mappers()
    try:
        open_database(url).dispose()
    except SQLAlchemyError as exc:
        log.warning("the database does not answer yet (%s); it is opened when first used", exc)


def import_tables() -> None:
    """Import the modules whose tables make up toolrun's schema (SQLModel.metadata)."""
    from toolrun.history import records, rollups  # noqa: F401, PLC0415
    from toolrun.interop import mcp_imports  # noqa: F401, PLC0415
    from toolrun.permissions import agents, inbox, rules, security_log, warnings  # noqa: F401, PLC0415
    from toolrun.plugins import store as plugin_store  # noqa: F401, PLC0415
    from toolrun.scheduler import store  # noqa: F401, PLC0415
    from toolrun.selection import preferences  # noqa: F401, PLC0415
    from toolrun.subagents import catalog  # noqa: F401, PLC0415


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision; one process at a time does it.

    A database made before toolrun used Alembic (its tables exist, no alembic_version) is
    stamped with the first revision, whose schema it has, and upgraded from there.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _migration_lock(engine), engine.connect() as connection:
        config.attributes["connection"] = connection
        tables = set(sqlalchemy.inspect(connection).get_table_names())
        if "alembic_version" not in tables and "call_history" in tables:
            command.stamp(config, FIRST_REVISION)
        command.upgrade(config, "head")
        connection.commit()


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """A lock across processes: PostgreSQL's advisory lock, or a file lock beside a SQLite
    database file."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            key = {"key": LOCK_KEY}
            connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"), key)
            try:
                yield
            finally:
                connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"), key)
                connection.commit()
        return
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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

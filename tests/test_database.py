"""Schema migrations on real SQLite and PostgreSQL: they build the models' schema, adopt a
database made before migrations, and several processes starting at once agree."""

from __future__ import annotations

import fcntl
import multiprocessing
from pathlib import Path

import sqlalchemy
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from toolrun.database import (
    FIRST_REVISION,
    MIGRATIONS,
    create_database_engine,
    import_tables,
    open_database,
)
from toolrun.history import CallRecord, HistoryStore


def _revision(engine: sqlalchemy.Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def test_migrations_build_exactly_the_models_schema(database_url: str) -> None:
    engine = open_database(database_url)
    import_tables()
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, SQLModel.metadata)
    head = _revision(engine)
    engine.dispose()

    assert differences == []
    assert head is not None
    assert head != FIRST_REVISION


def test_a_database_from_before_migrations_is_adopted_with_its_rows(database_url: str) -> None:
    engine = create_database_engine(database_url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.connect() as connection:  # what `create_all` left: the first schema, no version
        config.attributes["connection"] = connection
        command.upgrade(config, FIRST_REVISION)
        connection.execute(sqlalchemy.text("DROP TABLE alembic_version"))
        connection.execute(
            sqlalchemy.text(
                "INSERT INTO call_history (call_id, tool_name, status, queued_at) "
                "VALUES ('old-1', 'read', 'success', 1.0)"
            )
        )
        connection.commit()
    engine.dispose()

    engine = open_database(database_url)
    stored = HistoryStore(engine).get("old-1")
    tables = set(sqlalchemy.inspect(engine).get_table_names())
    head = _revision(engine)
    engine.dispose()

    assert isinstance(stored, CallRecord)
    assert stored.tool_name == "read"
    assert {"call_rollup", "rolled_hour", "alembic_version"} <= tables
    assert head != FIRST_REVISION


def _open(url: str) -> None:
    open_database(url).dispose()


def test_processes_starting_at_once_migrate_once(database_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    starters = [context.Process(target=_open, args=(database_url,)) for _ in range(4)]
    for starter in starters:
        starter.start()
    for starter in starters:
        starter.join(timeout=120)

    assert [s.exitcode for s in starters] == [0, 0, 0, 0]
    engine = open_database(database_url)
    assert _revision(engine) is not None
    engine.dispose()


def _open_in_child(url: str) -> None:
    open_database(url).dispose()


def test_a_process_forked_after_its_parent_migrated_does_not_migrate(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'toolrun.db'}"
    open_database(url).dispose()
    # Another process migrating now holds the lock: a pool process must not wait for it.
    with (tmp_path / "toolrun.db.migrate-lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        child = multiprocessing.get_context("fork").Process(target=_open_in_child, args=(url,))
        child.start()
        child.join(timeout=20)
        waited = child.is_alive()
        if waited:
            child.kill()
            child.join()
        fcntl.flock(lock, fcntl.LOCK_UN)

    assert not waited, "the forked process migrated again (it waited for the lock)"
    assert child.exitcode == 0

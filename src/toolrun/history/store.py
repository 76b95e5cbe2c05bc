"""The history store: rows written once per call end, queried newest first by cursor."""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sqlalchemy import tuple_
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, col, select

from toolrun.history.records import CallRecord
from toolrun.history.rollups import forget_hours, sealed_hours, take_rollup_lock

log = logging.getLogger(__name__)
_WRITE_ATTEMPTS = 5
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000


@dataclass(frozen=True)
class HistoryFilter:
    """Which rows: every field is optional; times are Unix seconds on queued_at."""

    tool: str | None = None
    version: str | None = None
    agent_id: str | None = None
    status: str | None = None
    since: float | None = None
    until: float | None = None
    parent_call_id: str | None = None  # the calls a Task call's sub-agent made


@dataclass(frozen=True)
class HistoryPage:
    rows: list[CallRecord]
    next_cursor: str | None  # pass back to get the next (older) page; None: no more


class InvalidCursor(ValueError):
    """A cursor that this store did not hand out."""


class HistoryStore:
    """Call history in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def write(self, record: CallRecord) -> None:
        """Insert or replace one call's row (a redelivered call ends once more)."""
        self.write_many([record])

    def write_many(self, records: Sequence[CallRecord]) -> None:
        """Insert or replace rows in one transaction.

        A busy SQLite database is retried; rows that still cannot be written are logged by
        call id rather than raised into a call's own path.
        """
        try:
            self.write_rows([record.model_dump() for record in records])
        except OperationalError as exc:
            lost = ", ".join(record.call_id for record in records)
            log.error("history rows not written (%s): calls %s", exc, lost)

    def write_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert or replace rows (column → value, as `records.row_of` gives them) in one
        transaction, retrying a busy SQLite database a few times (writing a row again
        changes nothing: a row per call id).

        Raises:
            sqlalchemy.exc.SQLAlchemyError: the rows could not be written.
        """
        if not rows:
            return
        ids = [row["call_id"] for row in rows]
        earlier = select(col(CallRecord.finished_at)).where(col(CallRecord.call_id).in_(ids))
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            try:
                with self.engine.begin() as connection:
                    ends = [row["finished_at"] for row in rows]
                    ends += connection.scalars(earlier).all()
                    # A rolled-up hour whose calls change is rolled up again when needed.
                    stale = sealed_hours(ends, time.time())
                    if stale:
                        take_rollup_lock(connection, time.time())
                    connection.execute(self._upsert, rows)
                    forget_hours(connection, stale)
                return
            except OperationalError:  # "database is locked" past the busy timeout
                if attempt == _WRITE_ATTEMPTS:
                    raise
                time.sleep(0.05 * attempt)

    @cached_property
    def _upsert(self) -> Any:
        """INSERT of a row, or UPDATE of every column of the row with its call id."""
        table = CallRecord.__table__  # type: ignore[attr-defined]
        insert = postgresql_insert if self.engine.dialect.name == "postgresql" else sqlite_insert
        statement = insert(table)
        columns = [column.name for column in table.columns if column.name != "call_id"]
        return statement.on_conflict_do_update(
            index_elements=["call_id"], set_={name: statement.excluded[name] for name in columns}
        )

    def get(self, call_id: str) -> CallRecord | None:
        with Session(self.engine) as session:
            return session.get(CallRecord, call_id)

    def query(
        self, where: HistoryFilter, *, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> HistoryPage:
        """Rows matching `where`, newest first, `limit` at a time.

        Raises:
            InvalidCursor: `cursor` is not one a page gave out.
        """
        query = _selected(select(CallRecord), where, None if cursor is None else _decode(cursor))
        with Session(self.engine) as session:
            rows = list(session.exec(query.limit(limit + 1)))
        more = len(rows) > limit
        rows = rows[:limit]
        last = rows[-1] if more and rows else None
        return HistoryPage(rows, None if last is None else _encode(last.queued_at, last.call_id))

    def rows(self, where: HistoryFilter, *, page_size: int = 1000) -> Iterator[dict[str, Any]]:
        """Every row matching `where` as a dict, newest first, read a page at a time (memory
        stays flat however many there are; no transaction stays open between pages)."""
        table = CallRecord.__table__  # type: ignore[attr-defined]
        after: tuple[float, str] | None = None
        while True:
            query = _selected(table.select(), where, after).limit(page_size)
            with self.engine.connect() as connection:
                page = [dict(row._mapping) for row in connection.execute(query)]
            yield from page
            if len(page) < page_size:
                return
            after = (page[-1]["queued_at"], page[-1]["call_id"])

    def callers(self, tool: str, versions: list[str], since: float) -> set[str]:
        """The agents that called any of these versions of `tool` since `since`."""
        table = CallRecord.__table__  # type: ignore[attr-defined]
        query = (
            select(table.c.agent_id)
            .distinct()
            .where(
                table.c.tool_name == tool,
                table.c.tool_version.in_(versions),
                table.c.queued_at >= since,
                table.c.agent_id.is_not(None),
            )
        )
        with self.engine.connect() as connection:
            return set(connection.scalars(query))

    def prune(self, before: float, *, batch: int = 5000) -> int:
        """Delete the rows of calls queued before `before` (Unix time), `batch` per
        transaction so writers are never held up long; returns how many went."""
        table = CallRecord.__table__  # type: ignore[attr-defined]
        oldest = (
            select(table.c.call_id, table.c.finished_at)
            .where(table.c.queued_at < before)
            .limit(batch)
        )
        deleted = 0
        while True:
            with self.engine.begin() as connection:
                take_rollup_lock(connection, time.time())
                found = connection.execute(oldest).all()
                ids = [call_id for call_id, _ in found]
                connection.execute(table.delete().where(table.c.call_id.in_(ids)))
                ends = [finished for _, finished in found]
                forget_hours(connection, sealed_hours(ends, time.time()))
            deleted += len(found)
            if len(found) < batch:
                return deleted


def _selected(query: Any, where: HistoryFilter, after: tuple[float, str] | None) -> Any:
    """`query` narrowed to `where` and to rows older than `after`, newest first."""
    conditions = {
        "tool_name": where.tool,
        "tool_version": where.version,
        "agent_id": where.agent_id,
        "status": where.status,
        "parent_call_id": where.parent_call_id,
    }
    for column, value in conditions.items():
        if value is not None:
            query = query.where(getattr(CallRecord, column) == value)
    queued = col(CallRecord.queued_at)
    if where.since is not None:
        query = query.where(queued >= where.since)
    if where.until is not None:
        query = query.where(queued < where.until)
    call = col(CallRecord.call_id)
    if after is not None:
        at, call_id = after
        # A row-value comparison: both databases bound the index scan with it.
        query = query.where(tuple_(queued, call) < tuple_(at, call_id))
    return query.order_by(queued.desc(), call.desc())


def _encode(queued_at: float, call_id: str) -> str:
    raw = json.dumps([queued_at, call_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        at, call_id = json.loads(raw)
        return float(at), str(call_id)
    except (ValueError, TypeError) as exc:
        raise InvalidCursor(f"invalid cursor {cursor[:80]!r}") from exc

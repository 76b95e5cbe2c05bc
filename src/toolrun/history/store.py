"""The history store: rows written once per call end, queried newest first by cursor."""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, or_
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, col, select

from toolrun.history.records import CallRecord

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
        if not records:
            return
        table = CallRecord.__table__  # type: ignore[attr-defined]
        insert = postgresql_insert if self.engine.dialect.name == "postgresql" else sqlite_insert
        statement = insert(table)
        columns = [column.name for column in table.columns if column.name != "call_id"]
        statement = statement.on_conflict_do_update(
            index_elements=["call_id"], set_={name: statement.excluded[name] for name in columns}
        )
        values = [record.model_dump() for record in records]
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            try:
                with self.engine.begin() as connection:
                    connection.execute(statement, values)
                return
            except OperationalError as exc:  # "database is locked" past the busy timeout
                if attempt == _WRITE_ATTEMPTS:
                    lost = ", ".join(record.call_id for record in records)
                    log.error("history rows not written (%s): calls %s", exc, lost)
                    return
                time.sleep(0.05 * attempt)

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
        query = select(CallRecord)
        conditions = {
            "tool_name": where.tool,
            "tool_version": where.version,
            "agent_id": where.agent_id,
            "status": where.status,
        }
        for column, value in conditions.items():
            if value is not None:
                query = query.where(getattr(CallRecord, column) == value)
        queued = col(CallRecord.queued_at)
        if where.since is not None:
            query = query.where(queued >= where.since)
        if where.until is not None:
            query = query.where(queued < where.until)
        if cursor is not None:
            at, call_id = _decode(cursor)
            call = col(CallRecord.call_id)
            query = query.where(or_(queued < at, and_(queued == at, call < call_id)))
        query = query.order_by(queued.desc(), col(CallRecord.call_id).desc()).limit(limit + 1)
        with Session(self.engine) as session:
            rows = list(session.exec(query))
        more = len(rows) > limit
        rows = rows[:limit]
        last = rows[-1] if more and rows else None
        return HistoryPage(rows, None if last is None else _encode(last))


def _encode(row: CallRecord) -> str:
    raw = json.dumps([row.queued_at, row.call_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        at, call_id = json.loads(raw)
        return float(at), str(call_id)
    except (ValueError, TypeError) as exc:
        raise InvalidCursor(f"invalid cursor {cursor[:80]!r}") from exc

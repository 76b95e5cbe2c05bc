"""The security log: every refused call and connection, in the database and as a log line."""

from __future__ import annotations

import json
import logging
import threading
import time
from enum import StrEnum

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Field, Session, SQLModel, col, select

log = logging.getLogger("toolrun.security")


class EventKind(StrEnum):
    BLOCKED_CALL = "blocked_call"  # above the ceiling, off the allowlist, outside the workspace
    NETWORK = "network"  # a connection the network allowlist refused
    AUTH = "auth"  # a request with a missing or unknown token
    FORBIDDEN = "forbidden"  # a role doing what it may not (an agent approving, say)
    JAIL = "jail"  # a path outside the workspace a tool's process was refused
    QUOTA = "quota"  # an agent over a quota, or a full queue (one event per burst)


class SecurityEvent(SQLModel, table=True):
    """One refusal: when, who, which call and tool, what it tried to reach, why not."""

    __tablename__ = "security_events"

    id: int | None = Field(default=None, primary_key=True)
    at: float = Field(index=True)
    kind: str = Field(index=True)
    agent_id: str | None = None
    call_id: str | None = None
    tool_name: str | None = None
    target: str | None = None
    reason: str


class SecurityLog:
    """Writes events to the `security_events` table and to the ``toolrun.security`` logger.

    At most `stored_per_minute` rows a minute per process reach the table, so that a flood
    of forged tokens cannot fill the database; every event still gets its log line.
    """

    def __init__(self, engine: Engine, *, stored_per_minute: int = 600) -> None:
        self.engine = engine
        self.stored_per_minute = stored_per_minute
        self._lock = threading.Lock()
        self._minute, self._stored = 0, 0

    def _admit(self, at: float) -> bool:
        with self._lock:
            minute = int(at // 60)
            if minute != self._minute:
                self._minute, self._stored = minute, 0
            self._stored += 1
            if self._stored == self.stored_per_minute + 1:
                log.warning(
                    "over %d security events this minute: the rest are only logged",
                    self.stored_per_minute,
                )
            return self._stored <= self.stored_per_minute

    def record(
        self,
        kind: EventKind,
        reason: str,
        *,
        agent_id: str | None = None,
        call_id: str | None = None,
        tool_name: str | None = None,
        target: str | None = None,
    ) -> None:
        """Log and store one event; a database failure is logged, never raised."""
        event = SecurityEvent(
            at=time.time(),
            kind=kind.value,
            agent_id=agent_id,
            call_id=call_id,
            tool_name=tool_name,
            target=target,
            reason=reason,
        )
        log.warning(json.dumps(event.model_dump(exclude={"id"}), sort_keys=True))
        if not self._admit(event.at):
            return
        try:
            with Session(self.engine) as session:
                session.add(event)
                session.commit()
        except SQLAlchemyError as exc:
            log.error("security event not stored: %s", exc)

    def list(
        self, *, kind: EventKind | None = None, since: float | None = None, limit: int = 100
    ) -> list[SecurityEvent]:
        """Newest first."""
        query = select(SecurityEvent).order_by(col(SecurityEvent.id).desc())
        if kind is not None:
            query = query.where(SecurityEvent.kind == kind.value)
        if since is not None:
            query = query.where(SecurityEvent.at >= since)
        with Session(self.engine) as session:
            return list(session.exec(query.limit(limit)))

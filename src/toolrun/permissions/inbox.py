"""The approval inbox: calls parked until an operator approves or denies them, or they expire.

Every decision is one conditional UPDATE (``WHERE status = 'pending'``), so two operators,
two API processes or an operator racing the expiry sweep can never both decide a call.
"""

from __future__ import annotations

import builtins
import time
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column, func, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, col, select

from toolrun.permissions.policy import Verdict
from toolrun.tools.model import ToolCall


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"


class ApprovalRecord(SQLModel, table=True):
    """One call that needed a human: what it would do, why it was parked, who decided."""

    __tablename__ = "approvals"

    call_id: str = Field(primary_key=True)
    agent_id: str | None = None
    agent_name: str | None = None
    tool_name: str
    tool_version: str
    arguments: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    policy: str
    risk: str
    warning: str
    status: str = Field(default=ApprovalStatus.PENDING.value, index=True)
    created_at: float
    expires_at: float = Field(index=True)
    decided_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None

    @classmethod
    def parked(
        cls, call: ToolCall, agent_name: str | None, verdict: Verdict, ttl_s: float
    ) -> ApprovalRecord:
        """The inbox entry of a call parked now, expiring after `ttl_s`."""
        now = time.time()
        return cls(
            call_id=call.id,
            agent_id=call.agent_id,
            agent_name=agent_name,
            tool_name=call.tool_name,
            tool_version=call.version or "",
            arguments=call.arguments,
            policy=verdict.policy.value,
            risk=verdict.risk.value,
            warning=verdict.warning,
            created_at=now,
            expires_at=now + ttl_s,
        )


class ApprovalInbox:
    """Approval records in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def park(self, record: ApprovalRecord) -> bool:
        """Add a parked call; False when that call is in the inbox already."""
        with Session(self.engine) as session:
            session.add(record)
            try:
                session.commit()
            except IntegrityError:
                return False
        return True

    def get(self, call_id: str) -> ApprovalRecord | None:
        with Session(self.engine) as session:
            return session.get(ApprovalRecord, call_id)

    def list(
        self,
        status: ApprovalStatus | None = None,
        limit: int = 100,
        *,
        agent_id: str | None = None,
    ) -> list[ApprovalRecord]:
        """Newest first; `agent_id`: that agent's calls only."""
        query = select(ApprovalRecord).order_by(col(ApprovalRecord.created_at).desc())
        if status is not None:
            query = query.where(ApprovalRecord.status == status.value)
        if agent_id is not None:
            query = query.where(ApprovalRecord.agent_id == agent_id)
        with Session(self.engine) as session:
            return list(session.exec(query.limit(limit)))

    def count(self, status: ApprovalStatus = ApprovalStatus.PENDING) -> int:
        """How many calls are in `status` (one indexed COUNT)."""
        query = (
            select(func.count())
            .select_from(ApprovalRecord)
            .where(ApprovalRecord.status == status.value)
        )
        with Session(self.engine) as session:
            return session.exec(query).one()

    def decide(
        self, call_id: str, *, approved: bool, by: str, reason: str | None = None
    ) -> ApprovalRecord | None:
        """Approve or deny a pending call; None when it is not pending (any more)."""
        status = ApprovalStatus.APPROVED if approved else ApprovalStatus.DENIED
        return self._move(call_id, ApprovalStatus.PENDING, status, by=by, reason=reason)

    def reopen(self, call_id: str, decided: ApprovalStatus) -> None:
        """Back to pending: a decision whose effect could not be stored or enqueued."""
        self._move(call_id, decided, ApprovalStatus.PENDING, by=None, reason=None)

    def expire(self, now: float | None = None) -> builtins.list[ApprovalRecord]:
        """Move every pending call past its deadline to expired; returns those moved."""
        deadline = time.time() if now is None else now
        query = select(ApprovalRecord.call_id).where(
            ApprovalRecord.status == ApprovalStatus.PENDING.value,
            ApprovalRecord.expires_at <= deadline,
        )
        with Session(self.engine) as session:
            overdue = list(session.exec(query))
        moved = (
            self._move(
                call_id,
                ApprovalStatus.PENDING,
                ApprovalStatus.EXPIRED,
                by="expiry",
                reason="nobody approved it in time",
            )
            for call_id in overdue
        )
        return [record for record in moved if record is not None]

    def _move(
        self,
        call_id: str,
        old: ApprovalStatus,
        new: ApprovalStatus,
        *,
        by: str | None,
        reason: str | None,
    ) -> ApprovalRecord | None:
        now = time.time()
        decided_at = None if new is ApprovalStatus.PENDING else now
        statement = (
            update(ApprovalRecord)
            .where(col(ApprovalRecord.call_id) == call_id, col(ApprovalRecord.status) == old.value)
            .values(status=new.value, decided_at=decided_at, decided_by=by, reason=reason)
        )
        if new is ApprovalStatus.APPROVED:  # past its deadline it may only expire
            statement = statement.where(col(ApprovalRecord.expires_at) > now)
        with Session(self.engine) as session:
            changed = session.exec(statement).rowcount
            session.commit()
            return session.get(ApprovalRecord, call_id) if changed == 1 else None

"""Warnings for agents: things they rely on that changed (a plugin they used was removed).
Kept per agent, newest first, for `GET /v1/agents/{id}/warnings`."""

from __future__ import annotations

import time
from collections.abc import Iterable

from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, col, select


class AgentWarning(SQLModel, table=True):
    """One warning to one agent."""

    __tablename__ = "agent_warnings"

    id: int | None = Field(default=None, primary_key=True)
    agent_id: str = Field(index=True)
    at: float
    kind: str  # e.g. "tool_removed"
    message: str


class AgentWarnings:
    """Agent warnings in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def warn(self, agent_ids: Iterable[str], kind: str, message: str) -> int:
        """Give each agent the same warning; returns how many were written."""
        now = time.time()
        rows = [
            AgentWarning(agent_id=agent_id, at=now, kind=kind, message=message)
            for agent_id in sorted(set(agent_ids))
        ]
        with Session(self.engine) as session:
            session.add_all(rows)
            session.commit()
        return len(rows)

    def of(self, agent_id: str, limit: int = 100) -> list[AgentWarning]:
        query = (
            select(AgentWarning)
            .where(AgentWarning.agent_id == agent_id)
            .order_by(col(AgentWarning.at).desc(), col(AgentWarning.id).desc())
            .limit(limit)
        )
        with Session(self.engine) as session:
            return list(session.exec(query).all())

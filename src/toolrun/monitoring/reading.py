"""What /metrics serves, read now: the Redis snapshot, the approval inbox's backlog and the
age of its oldest call, the names of the agents it mentions, and the restarts `toolrun up`'s
supervisor records, as one collector."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from sqlmodel import Session, col, func, select

from toolrun.embedded.supervisor import read_status
from toolrun.monitoring.collector import PlatformCollector
from toolrun.monitoring.snapshot import read_snapshot
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord, ApprovalStatus


async def read_platform(
    client: aioredis.Redis,
    *,
    inbox: ApprovalInbox,
    agents: AgentStore,
    queue_bound: int,
    status_file: Path | None = None,
) -> PlatformCollector:
    """The platform's metrics as of now (raises redis.RedisError when Redis is down, and
    SQLAlchemyError when the database is). `status_file`: the supervisor's, where `toolrun
    up` records its processes' restarts."""
    snapshot = await read_snapshot(client)
    pending = await asyncio.to_thread(inbox.count, ApprovalStatus.PENDING)
    oldest = await asyncio.to_thread(oldest_pending, inbox) if pending else None
    named = {*snapshot.agents_in_flight, *(agent for agent, _ in snapshot.throttled)}
    names = await asyncio.to_thread(agents.names, named)
    status = read_status(status_file) if status_file is not None else None
    return PlatformCollector(
        snapshot,
        approvals_pending=pending,
        oldest_pending_s=0.0 if oldest is None else max(0.0, time.time() - oldest),
        agent_names=names,
        queue_bound=queue_bound,
        process_restarts=process_restarts(status),
    )


def oldest_pending(inbox: ApprovalInbox) -> float | None:
    """When the oldest pending call was parked (one MIN over the status index), None when
    none is."""
    query = select(func.min(col(ApprovalRecord.created_at))).where(
        ApprovalRecord.status == ApprovalStatus.PENDING.value
    )
    with Session(inbox.engine) as session:
        found: float | None = session.exec(query).one()
        return found


def process_restarts(status: dict[str, Any] | None) -> dict[str, int]:
    """Each supervised process's restarts, from the supervisor's status (None: no `up`)."""
    restarts = {}
    for name, process in (status or {}).items():
        count = process.get("restarts") if isinstance(process, dict) else None
        if isinstance(count, int):
            restarts[name] = count
    return restarts

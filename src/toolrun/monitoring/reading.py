"""What /metrics serves, read now: the Redis snapshot, the approval inbox's backlog and the
names of the agents it mentions, as one collector."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from toolrun.monitoring.collector import PlatformCollector
from toolrun.monitoring.snapshot import read_snapshot
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.inbox import ApprovalInbox, ApprovalStatus


async def read_platform(
    client: aioredis.Redis, *, inbox: ApprovalInbox, agents: AgentStore, queue_bound: int
) -> PlatformCollector:
    """The platform's metrics as of now (raises redis.RedisError when Redis is down, and
    SQLAlchemyError when the database is)."""
    snapshot = await read_snapshot(client)
    pending = await asyncio.to_thread(inbox.count, ApprovalStatus.PENDING)
    named = {*snapshot.agents_in_flight, *(agent for agent, _ in snapshot.throttled)}
    names = await asyncio.to_thread(agents.names, named)
    return PlatformCollector(
        snapshot, approvals_pending=pending, agent_names=names, queue_bound=queue_bound
    )

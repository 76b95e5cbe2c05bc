"""Call records in Redis: created by the API, advanced by workers, awaited by callers.

A record is the call's ToolResult in its latest state (queued, running, then final). When
a call ends its worker also pushes a token on a per-call list, so waiters block in BLPOP
instead of polling.
"""

from __future__ import annotations

import time

import redis
import redis.asyncio as aioredis

from toolrun.calls import keys
from toolrun.tools.model import ToolResult

_DONE_TOKEN = "1"  # noqa: S105 - a wake-up token, not a secret
_DONE_TTL_S = 600


class CallStore:
    """Synchronous access, for workers and tools that run outside an event loop."""

    def __init__(self, client: redis.Redis, *, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s

    def get(self, call_id: str) -> ToolResult | None:
        raw = self.client.get(keys.record(call_id))
        return None if raw is None else ToolResult.model_validate_json(raw)

    def save(self, result: ToolResult) -> None:
        """Store a non-final state (running)."""
        self.client.set(keys.record(result.call_id), result.model_dump_json(), ex=self.ttl_s)

    def finish(self, result: ToolResult) -> None:
        """Store the final state and wake every waiter."""
        result.metadata.setdefault("finished_at", time.time())
        pipe = self.client.pipeline()
        pipe.set(keys.record(result.call_id), result.model_dump_json(), ex=self.ttl_s)
        pipe.rpush(keys.done(result.call_id), _DONE_TOKEN)
        pipe.expire(keys.done(result.call_id), _DONE_TTL_S)
        pipe.execute()

    def count_delivery(self, call_id: str) -> int:
        """Record one more start of the call; returns how many there have been."""
        pipe = self.client.pipeline()
        pipe.incr(keys.deliveries(call_id))
        pipe.expire(keys.deliveries(call_id), self.ttl_s)
        count, _ = pipe.execute()
        return int(count)

    def dead_letter(self, call_id: str) -> None:
        self.client.rpush(keys.DEAD_LETTERS, call_id)

    def dead_letters(self) -> list[str]:
        items = self.client.lrange(keys.DEAD_LETTERS, 0, -1)
        return [item.decode() if isinstance(item, bytes) else str(item) for item in items]


class AsyncCallStore:
    """Asynchronous access, for the API."""

    def __init__(self, client: aioredis.Redis, *, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s

    async def create(self, result: ToolResult) -> bool:
        """Store a new call's first state; False when the id is already taken."""
        created = await self.client.set(
            keys.record(result.call_id), result.model_dump_json(), ex=self.ttl_s, nx=True
        )
        return bool(created)

    async def get(self, call_id: str) -> ToolResult | None:
        raw = await self.client.get(keys.record(call_id))
        return None if raw is None else ToolResult.model_validate_json(raw)

    async def finish(self, result: ToolResult) -> None:
        """Store a state the API decided itself (e.g. awaiting_approval), no worker involved."""
        await self.client.set(keys.record(result.call_id), result.model_dump_json(), ex=self.ttl_s)

    async def wait(self, call_id: str, timeout_s: float) -> ToolResult | None:
        """The call's state once it has ended, or its current state after `timeout_s`."""
        current = await self.get(call_id)
        if current is None or current.final or timeout_s <= 0:
            return current
        woke = await self.client.blpop([keys.done(call_id)], timeout=timeout_s)
        if woke is not None:
            # Put the token back so that other callers waiting on the same call wake too.
            await self.client.lpush(keys.done(call_id), _DONE_TOKEN)
        return await self.get(call_id)

"""Call records in Redis: created by the API, advanced by workers, awaited by callers.

A record is the call's ToolResult in its latest state (queued, running, then final). When
a call ends its worker also pushes the final result on a per-call list, so a waiter blocks
in BLPOP and gets the result in the same round trip, instead of polling.
"""

from __future__ import annotations

import time

import redis
import redis.asyncio as aioredis

from toolrun.calls import keys
from toolrun.tools.model import ToolResult

_DONE_TTL_S = 600


class CallStore:
    """Synchronous access, for workers and tools that run outside an event loop."""

    def __init__(self, client: redis.Redis, *, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s

    def get(self, call_id: str) -> ToolResult | None:
        raw = self.client.get(keys.record(call_id))
        return None if raw is None else ToolResult.model_validate_json(raw)

    def start(self, running: ToolResult) -> int:
        """Count one more delivery of the call and store its running state, in one round trip.

        Returns how many deliveries there have been, this one included.
        """
        call_id = running.call_id
        pipe = self.client.pipeline(transaction=False)
        pipe.incr(keys.deliveries(call_id))
        pipe.expire(keys.deliveries(call_id), self.ttl_s)
        pipe.set(keys.record(call_id), running.model_dump_json(), ex=self.ttl_s)
        count, _, _ = pipe.execute()
        return int(count)

    def finish(self, result: ToolResult) -> None:
        """Store the final state and hand it to every waiter."""
        result.metadata.setdefault("finished_at", time.time())
        encoded = result.model_dump_json()
        pipe = self.client.pipeline(transaction=False)
        pipe.set(keys.record(result.call_id), encoded, ex=self.ttl_s)
        pipe.rpush(keys.done(result.call_id), encoded)
        pipe.expire(keys.done(result.call_id), _DONE_TTL_S)
        pipe.execute()

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

    async def wait_final(self, call_id: str, timeout_s: float) -> bytes | None:
        """The call's final result as JSON if it ends within `timeout_s`, else None."""
        woke = await self.client.blpop([keys.done(call_id)], timeout=timeout_s)
        if woke is None:
            return None
        _key, encoded = woke
        # Put it back: another caller may be waiting on the same call.
        await self.client.lpush(keys.done(call_id), encoded)
        return encoded.encode() if isinstance(encoded, str) else encoded

"""Call records in Redis: created by the API, advanced by workers, awaited by callers.

A record is the call's ToolResult in its latest state (queued, running, then final). When
a call ends its worker also pushes the final result on a per-call list, so a waiter blocks
in BLMOVE (the list onto itself: the result stays for other waiters) and gets the result
in the same round trip, instead of polling.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis
import redis.asyncio as aioredis

from toolrun.calls import keys
from toolrun.tools.model import ToolResult

_DONE_TTL_S = 600
_DEAD_LETTERS_KEPT = 10_000

# One round trip, atomically: unless the call already ended (a redelivery after a worker
# died between storing the result and acknowledging the message) or is back to waiting for
# approval (its approval was undone), count the delivery and store the running state.
# Returns the delivery count, or 0 for a call that must not run.
_START = """
local current = redis.call('GET', KEYS[1])
if current then
    local status = cjson.decode(current)['status']
    if status ~= 'queued' and status ~= 'running' then
        return 0
    end
end
local count = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return count
"""


def _queue_finish(pipe: Any, result: ToolResult, ttl_s: int) -> None:
    """Queue on `pipe` (sync or async) what storing a final state takes."""
    result.metadata.setdefault("finished_at", time.time())
    encoded = result.model_dump_json()
    pipe.set(keys.record(result.call_id), encoded, ex=ttl_s)
    pipe.rpush(keys.done(result.call_id), encoded)
    pipe.expire(keys.done(result.call_id), _DONE_TTL_S)
    if keys.run_of(result.call_id) is not None:  # a DAG node's call: tell the scheduler
        pipe.rpush(keys.SCHEDULER_WAKE, result.call_id)


class CallStore:
    """Synchronous access, for workers and tools that run outside an event loop."""

    def __init__(self, client: redis.Redis, *, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s
        self._start = client.register_script(_START)

    def create(self, result: ToolResult) -> bool:
        """Store a new call's first state; False when the id is already taken."""
        key = keys.record(result.call_id)
        return bool(self.client.set(key, result.model_dump_json(), ex=self.ttl_s, nx=True))

    def replace(self, result: ToolResult) -> None:
        """Overwrite an existing call's state (an approved call becoming queued again)."""
        self.client.set(
            keys.record(result.call_id), result.model_dump_json(), ex=self.ttl_s, xx=True
        )

    def forget(self, call_id: str) -> None:
        """Drop the record of a call that was never sent, so it can be sent afresh."""
        self.client.delete(keys.record(call_id))

    def get(self, call_id: str) -> ToolResult | None:
        raw = self.client.get(keys.record(call_id))
        return None if raw is None else ToolResult.model_validate_json(raw)

    def get_many(self, call_ids: list[str]) -> list[ToolResult | None]:
        """The records of these calls, None where there is none."""
        raw = self.client.mget([keys.record(call_id) for call_id in call_ids]) if call_ids else []
        return [None if item is None else ToolResult.model_validate_json(item) for item in raw]

    def start(self, running: ToolResult) -> int:
        """Count one more delivery and store the running state (one atomic round trip).

        Returns how many deliveries there have been, this one included; 0 when the call
        has already ended and must not run again.
        """
        call_id = running.call_id
        keys_ = [keys.record(call_id), keys.deliveries(call_id)]
        count = self._start(keys=keys_, args=[running.model_dump_json(), self.ttl_s])
        return int(count)

    def finish(self, result: ToolResult, also: Callable[[Any], None] | None = None) -> None:
        """Store the final state and hand it to every waiter; `also` queues more commands
        on the same pipeline (the call's counters: no round trip of their own)."""
        pipe = self.client.pipeline(transaction=False)
        _queue_finish(pipe, result, self.ttl_s)
        if also is not None:
            also(pipe)
        pipe.execute()

    def wait_final(self, call_id: str, timeout_s: float) -> ToolResult | None:
        """The call's final result if it ends within `timeout_s`, else None."""
        done = keys.done(call_id)
        # Moved from the list's tail to its head: read, and still there for other waiters.
        # Redis takes fractional seconds; redis-py's stubs say int.
        encoded = self.client.blmove(done, done, timeout_s, "RIGHT", "LEFT")  # type: ignore[arg-type]
        return None if encoded is None else ToolResult.model_validate_json(encoded)

    def dead_letter(self, call_id: str) -> None:
        """Remember a call given up on; the newest 10,000 are kept."""
        pipe = self.client.pipeline(transaction=False)
        pipe.rpush(keys.DEAD_LETTERS, call_id)
        pipe.ltrim(keys.DEAD_LETTERS, -_DEAD_LETTERS_KEPT, -1)
        pipe.execute()


class AsyncCallStore:
    """Asynchronous reads, for the API's event loop (the lifecycle does the writing)."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client

    async def get(self, call_id: str) -> ToolResult | None:
        raw = await self.client.get(keys.record(call_id))
        return None if raw is None else ToolResult.model_validate_json(raw)

    async def wait_final(self, call_id: str, timeout_s: float) -> bytes | None:
        """The call's final result as JSON if it ends within `timeout_s`, else None."""
        done = keys.done(call_id)
        # Moved from the list's tail to its head: read, and still there for other waiters.
        # Redis takes fractional seconds; redis-py's stubs say int.
        encoded = await self.client.blmove(done, done, timeout_s, "RIGHT", "LEFT")  # type: ignore[arg-type]
        if encoded is None:
            return None
        return encoded.encode() if isinstance(encoded, str) else encoded

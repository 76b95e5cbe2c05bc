"""Call records in Redis: created by the API, advanced by workers, awaited by callers.

A record is the call's ToolResult in its latest state (queued, running, then final). When
a call ends its worker also pushes the final result on a per-call list, so a waiter blocks
in BLMOVE (the list onto itself: the result stays for other waiters) and gets the result
in the same round trip, instead of polling.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis

from toolrun.calls import keys
from toolrun.calls.fairness import (
    FAIR_QUEUES,
    LUA_PUMP,
    LUA_STEPS,
    LUA_WITHDRAW,
    Step,
    agent_key,
    decoded,
    joined,
    lua_function,
)
from toolrun.calls.lua import LuaScript, Reply
from toolrun.tools.model import ToolResult, ToolStatus

_DONE_TTL_S = 600
_DEAD_LETTERS_KEPT = 10_000

# One round trip, atomically: unless the call already ended (a redelivery after a worker
# died between storing the result and acknowledging the message) or is back to waiting for
# approval (its approval was undone), count the delivery and store the running state.
# Returns the delivery count, or 0 for a call that must not run (no worker holds it then).
# With a count it publishes each `Broadcast` of ARGV from 4 on (channel, message).
_START = """
redis.call('ZREM', KEYS[4], ARGV[3])
redis.call('HDEL', KEYS[5], ARGV[3])
local current = redis.call('GET', KEYS[1])
if current then
    local status = cjson.decode(current)['status']
    if status ~= 'queued' and status ~= 'running' then
        redis.call('HDEL', KEYS[3], ARGV[3])
        return 0
    end
end
for i = 4, #ARGV, 2 do
    redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
local count = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return count
"""


# Compare and set: the record's new state, only while it is in the state ARGV[3].
_REPLACE = """
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current)['status'] == ARGV[3] then
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
    if ARGV[4] ~= '' then
        redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
        redis.call('HSET', KEYS[3], ARGV[6], ARGV[4])
    end
    return 1
end
return 0
"""
# One round trip, atomically: the record unless its id is taken, the request's digest
# beside it, and for a call ended as it is created, its history row's makings in the
# outbox (`calls.outbox`). Returns 1 when created.
LUA_CREATE = lua_function(
    "create",
    """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[3]) then
    redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
    if ARGV[4] ~= '' then
        redis.call('XADD', KEYS[3], '*', 'result', ARGV[1], 'arguments', ARGV[4])
    end
    if ARGV[5] ~= '' then
        redis.call('ZADD', KEYS[4], ARGV[6], ARGV[7])
        redis.call('HSET', KEYS[5], ARGV[7], ARGV[5])
    end
    return 1
end
return 0
""",
)
_CREATE = LUA_CREATE + "return create(KEYS, ARGV)"


# One round trip, atomically: unless the call has already ended (the first ending wins: a
# worker back after the platform settled its call as lost, a cancel racing a finish),
# store the final state, hand it to the waiters, wake the scheduler for a DAG node's call,
# add its history row's makings to the outbox (`calls.outbox`), forget which worker held
# it, free its slot and its place among its agent's open calls, take it out of its agent's
# list if it ends while it waits, with its delivery (`calls.fairness`: KEYS from 8 on,
# ARGV[8] the agent),
# and add the call's counters (`Increment`s: key, field, amount, from ARGV[11] on). Only
# from the states in ARGV[7] (",queued,running,": a cancel ends only what has not
# started). With ARGV[9], publishes ARGV[10] on channel ARGV[9] (a `Broadcast`) whether
# or not the ending is stored. Returns 1 when stored.
_FINISH_STEP = lua_function(
    "finish",
    LUA_WITHDRAW
    + """
if ARGV[9] ~= '' then
    redis.call('PUBLISH', ARGV[9], ARGV[10])
end
local current = redis.call('GET', KEYS[1])
if current then
    local status = cjson.decode(current)['status']
    if not string.find(ARGV[7], ',' .. status .. ',', 1, true) then
        return 0
    end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[3])
if ARGV[4] ~= '' then
    redis.call('RPUSH', KEYS[3], ARGV[4])
end
if ARGV[5] ~= '' then
    redis.call('XADD', KEYS[4], '*', 'result', ARGV[1], 'arguments', ARGV[5])
end
local waiting = redis.call('HGET', KEYS[7], ARGV[6])
if waiting then
    withdraw(waiting, ARGV[6], KEYS[9])
end
redis.call('HDEL', KEYS[5], ARGV[6])
redis.call('ZREM', KEYS[6], ARGV[6])
redis.call('HDEL', KEYS[7], ARGV[6])
redis.call('HDEL', KEYS[11], ARGV[6])
redis.call('ZREM', KEYS[8], ARGV[6])
if redis.call('EXISTS', KEYS[8]) == 0 then
    redis.call('SREM', KEYS[10], ARGV[8])
end
for i = 12, #KEYS do
    redis.call('ZREM', KEYS[i], ARGV[6])
end
for i = 11, #ARGV, 3 do
    if string.find(ARGV[i + 2], '[.eEn]') then
        redis.call('HINCRBYFLOAT', ARGV[i], ARGV[i + 1], ARGV[i + 2])
    else
        redis.call('HINCRBY', ARGV[i], ARGV[i + 1], ARGV[i + 2])
    end
end
return 1
""",
)
# The ending, then (a second step with keys) a pump of the queue whose slot it freed
# (`calls.fairness`), whether or not this ending was the first: the slot is free either
# way. Steps as `fairness.joined` gives them. Returns {1 when stored, else 0; the ids
# the pump handed out (and put on the broker)}.
_FINISH = (
    _FINISH_STEP
    + LUA_PUMP
    + LUA_STEPS
    + """
local ending, pumped = unpack(steps(2))
local stored = finish(ending.keys, ending.args)
if #pumped.keys == 0 then
    return {stored}
end
return {stored, unpack(pump(pumped.keys, pumped.args))}
"""
)
_HANDED_OUT = tuple(keys.fair_sent(queue) for queue in sorted(FAIR_QUEUES))
_PENDING = ",queued,running,awaiting_approval,"  # the states a call may end from
_NOT_STARTED = ",queued,awaiting_approval,"
# A counter to add to when a call ends: (hash key, field, amount).
Increment = tuple[str, str, int | float]


@dataclass(frozen=True)
class Broadcast:
    """A message published on a channel in the round trip of a change of a call's state
    (the workers' Celery task events: `workers.task_events`)."""

    channel: str
    message: str


def _broadcast_args(broadcast: Broadcast | None) -> list[str]:
    return ["", ""] if broadcast is None else [broadcast.channel, broadcast.message]


@dataclass(frozen=True)
class Finished:
    """What `CallStore.finish` did: whether the ending was stored (the first one), and the
    ids of the calls its pump handed out (their deliveries are on the broker)."""

    stored: bool
    handed_out: list[str]


@dataclass(frozen=True)
class Starting:
    """A call's start, sent (`CallStore.send_start`)."""

    reply: Reply

    def deliveries(self) -> int:
        """How many deliveries there have been, this one included; 0 when the call has
        already ended and must not run again (read off the connection at first ask)."""
        return int(self.reply.get())


def increments_args(increments: Iterable[Increment]) -> list[str | int | float]:
    """`increments` as the flat arguments of an ending (`_FINISH_STEP`'s ARGV from 11 on;
    a float keeps its point)."""
    flat: list[str | int | float] = []
    for key, field, amount in increments:
        if isinstance(amount, float) and not math.isfinite(amount):
            continue  # Redis refuses it, and would leave the script half done
        flat += [key, field, repr(amount) if isinstance(amount, float) else str(amount)]
    return flat


def add_increments(client: redis.Redis, increments: Iterable[Increment]) -> None:
    """Add `increments` in one round trip (a call ended without `CallStore.finish`)."""
    pipe = client.pipeline(transaction=False)
    for key, field, amount in increments:
        if isinstance(amount, float):
            pipe.hincrbyfloat(key, field, amount)
        else:
            pipe.hincrby(key, field, amount)
    pipe.execute()


class CallStore:
    """Synchronous access, for workers and tools that run outside an event loop."""

    def __init__(self, client: redis.Redis, *, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s
        self._start = LuaScript(client, _START)
        self._create = LuaScript(client, _CREATE)
        self._finish = LuaScript(client, _FINISH)
        self._replace = LuaScript(client, _REPLACE)

    def create(
        self,
        result: ToolResult,
        *,
        request: str,
        arguments: str | None = None,
        envelope: str | None = None,
    ) -> bool:
        """Store a new call's first state and the digest of what it asked for (`request`,
        see `ToolCall.digest`); False, with nothing written, when the id is taken.
        `arguments`: for a call that ends as it is created, its arguments as JSON,
        secrets redacted, to put its history row in the outbox with it. `envelope`: for a
        call about to be queued, its envelope as JSON, kept until a worker starts it."""
        step = self.create_step(result, request=request, arguments=arguments, envelope=envelope)
        return bool(self._create(keys=step.keys, args=step.args))

    def create_step(
        self,
        result: ToolResult,
        *,
        request: str,
        arguments: str | None = None,
        envelope: str | None = None,
    ) -> Step:
        """`create` as a step of another script (`LUA_CREATE`): 1 when created."""
        call_id = result.call_id
        call_keys = [
            keys.record(call_id),
            keys.request(call_id),
            keys.HISTORY_OUTBOX,
            keys.SENT,
            keys.SENT_ENVELOPES,
        ]
        queued_at = result.metadata.get("queued_at") or time.time()
        args: list[str | int | float] = [
            result.model_dump_json(),
            request,
            self.ttl_s,
            arguments or "",
            envelope or "",
            queued_at,
            call_id,
        ]
        return Step("create", call_keys, args)

    def replace(self, result: ToolResult, *, was: ToolStatus, envelope: str | None = None) -> bool:
        """Move a call from state `was` to `result` (an approved call becoming queued), in
        one atomic step; False, with nothing written, when it is no longer in `was`.
        `envelope`: as for `create`."""
        queued_at = result.metadata.get("queued_at") or time.time()
        replaced = self._replace(
            keys=[keys.record(result.call_id), keys.SENT, keys.SENT_ENVELOPES],
            args=[
                result.model_dump_json(),
                self.ttl_s,
                was.value,
                envelope or "",
                queued_at,
                result.call_id,
            ],
        )
        return bool(replaced)

    def forget(self, call_id: str) -> None:
        """Drop the record of a call that was never sent, so it can be sent afresh."""
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(keys.record(call_id), keys.request(call_id))
        self._unsend(pipe, call_id)
        pipe.execute()

    def sent_before(self, cutoff: float, limit: int = 500) -> dict[str, str]:
        """Calls queued before `cutoff` and not yet started: id → envelope (JSON)."""
        ids: Any = self.client.zrangebyscore(keys.SENT, "-inf", cutoff, start=0, num=limit)
        if not ids:
            return {}
        envelopes: Any = self.client.hmget(keys.SENT_ENVELOPES, ids)
        return {
            call_id.decode(): envelope.decode()
            for call_id, envelope in zip(ids, envelopes, strict=True)
            if envelope is not None
        }

    def waiting_their_turn(self, call_ids: Iterable[str]) -> set[str]:
        """Those of these calls that wait their turn on a shared queue: their envelope is
        kept, and they are not noted as sent (a call put in its agent's list leaves
        `keys.SENT`, a call handed out is noted there again: `calls.fairness`)."""
        ids = list(call_ids)
        if not ids:
            return set()
        pipe = self.client.pipeline(transaction=True)
        pipe.hmget(keys.SENT_ENVELOPES, ids)
        pipe.zmscore(keys.SENT, ids)
        kept, noted = pipe.execute()
        return {
            call_id
            for call_id, envelope, sent in zip(ids, kept, noted, strict=True)
            if envelope is not None and sent is None
        }

    def sent_again(self, call_id: str, at: float) -> None:
        """Note that a call whose message was lost was sent again at `at`."""
        self.client.zadd(keys.SENT, {call_id: at}, xx=True)

    def unsend(self, call_id: str) -> None:
        """Forget that the call waits to be started (it ended, or started, elsewhere)."""
        pipe = self.client.pipeline(transaction=True)
        self._unsend(pipe, call_id)
        pipe.execute()

    @staticmethod
    def _unsend(pipe: Any, call_id: str) -> None:
        pipe.zrem(keys.SENT, call_id)
        pipe.hdel(keys.SENT_ENVELOPES, call_id)
        pipe.hdel(keys.SENT_MESSAGES, call_id)

    def get(self, call_id: str) -> ToolResult | None:
        raw = self.client.get(keys.record(call_id))
        return None if raw is None else ToolResult.model_validate_json(raw)

    def get_many(self, call_ids: list[str]) -> list[ToolResult | None]:
        """The records of these calls, None where there is none."""
        raw = self.client.mget([keys.record(call_id) for call_id in call_ids]) if call_ids else []
        return [None if item is None else ToolResult.model_validate_json(item) for item in raw]

    def send_start(self, running: ToolResult, broadcasts: Sequence[Broadcast] = ()) -> Starting:
        """Count one more delivery and store the running state, and publish `broadcasts`
        (one atomic round trip; none of it for a call that must not run). Sent without
        waiting for the answer, which `Starting.deliveries()` reads (on this thread): how
        many deliveries there have been, this one included; 0 when the call has already
        ended and must not run again. The caller does meanwhile what needs no answer."""
        call_id = running.call_id
        keys_ = [
            keys.record(call_id),
            keys.deliveries(call_id),
            keys.HOLDERS,
            keys.SENT,
            keys.SENT_ENVELOPES,
        ]
        args: list[str | int] = [running.model_dump_json(), self.ttl_s, call_id]
        for broadcast in broadcasts:
            args += [broadcast.channel, broadcast.message]
        return Starting(self._start.send(keys=keys_, args=args))

    def finish(
        self,
        result: ToolResult,
        increments: Iterable[Increment] = (),
        *,
        arguments: str | None = None,
        unless_started: bool = False,
        pump: Step | None = None,
        broadcast: Broadcast | None = None,
    ) -> Finished:
        """Store the final state, hand it to every waiter, add the call's counters and
        publish `broadcast` (whether or not the ending is stored), in one atomic round
        trip; not `stored`, with nothing written, when the call had already ended (the
        first ending wins), or had started and `unless_started` (a cancel).
        `arguments`: the call's arguments as JSON, secrets redacted, to put the call's
        history row in the outbox with its final state. `pump`: the queue whose slot the
        ending frees (`FairQueues.pump_step`), pumped in the same round trip:
        what it handed out (and put on the broker) is `handed_out`."""
        result.metadata.setdefault("finished_at", time.time())
        encoded = result.model_dump_json()
        call_id = result.call_id
        wake = call_id if keys.run_of(call_id) is not None else ""  # a DAG node's call
        agent = agent_key(result.metadata.get("agent_id"))
        call_keys = [
            keys.record(call_id),
            keys.done(call_id),
            keys.SCHEDULER_WAKE,
            keys.HISTORY_OUTBOX,
            keys.HOLDERS,
            keys.SENT,
            keys.SENT_ENVELOPES,
            keys.agent_open(agent),
            keys.FAIR_WAITING,
            keys.AGENTS_OPEN,
            keys.SENT_MESSAGES,
            *_HANDED_OUT,
        ]
        args = [
            encoded,
            self.ttl_s,
            _DONE_TTL_S,
            wake,
            arguments or "",
            call_id,
            _NOT_STARTED if unless_started else _PENDING,
            agent,
            *_broadcast_args(broadcast),
            *increments_args(increments),
        ]
        then = pump or Step("pump", [])
        if then.function != "pump":
            raise ValueError(f"an ending pumps its queue, not {then.function}")
        script_keys, script_args = joined(Step("finish", call_keys, args), then)
        answer: Any = self._finish(keys=script_keys, args=script_args)
        return Finished(stored=bool(answer[0]), handed_out=decoded(answer[1:]))

    def holders(self, call_ids: list[str]) -> list[str | None]:
        """Which worker took each call's message, None where none is noted."""
        found: Any = self.client.hmget(keys.HOLDERS, call_ids) if call_ids else []
        return [None if name is None else name.decode() for name in found]

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

    async def request(self, call_id: str) -> str | None:
        """The digest of what the call asked for, as `CallStore.create` stored it."""
        raw = await self.client.get(keys.request(call_id))
        return raw.decode() if isinstance(raw, bytes) else raw

    async def wait_final(self, call_id: str, timeout_s: float) -> bytes | None:
        """The call's final result as JSON if it ends within `timeout_s`, else None."""
        done = keys.done(call_id)
        # Moved from the list's tail to its head: read, and still there for other waiters.
        # Redis takes fractional seconds; redis-py's stubs say int.
        encoded = await self.client.blmove(done, done, timeout_s, "RIGHT", "LEFT")  # type: ignore[arg-type]
        if encoded is None:
            return None
        return encoded.encode() if isinstance(encoded, str) else encoded

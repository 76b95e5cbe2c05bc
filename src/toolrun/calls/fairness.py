"""Fair dispatch: on a shared queue, calls are taken from agents in turn.

Celery's queues are first in, first out: one agent's backlog would decide everyone's
latency. So a call admitted to a shared queue (a permission level's, or the delegations')
does not go to the broker at once. It waits in its agent's list, and the agents with calls
waiting form a ring, one per priority. A call reaches the broker only while the queue's
workers have room: the calls handed to them and not ended (`keys.fair_sent`) stay below
their pool sizes together (each live worker says its own: `workers.presence`) plus
`ahead`, a few more so that no slot idles between one call's end and the next's start.

Taking a call (`pump`) serves the agent at the head of the ring, one call, then moves it
to the back (round robin: every agent with calls waiting gets one call per turn, however
many it has queued). An agent that had nothing waiting joins at the head: it has had
less than the others, and its one call goes next — an agent making one call at a time
waits for one slot to free, never behind a flood. Interactive calls go first; batch work
(DAG nodes, calls marked `priority: batch`) gets every `batch_every + 1`-th turn while
interactive calls wait, so it is never starved. Whoever frees or adds work pumps: the
API as it queues a call, a worker as it ends one, a worker as it starts, the reapers
every few seconds (a pump lost to a crash is made up there). Everything happens in one
Lua script per pump, so concurrent pumps never hand out a slot twice.

A call handed out and then lost before it reaches the broker is in `keys.SENT`, which the
reapers resend from. A call handed out counts until its ending removes it
(`CallStore.finish`); one whose ending was lost (its record expired) is dropped after
`recheck_s` by the pump that finds it.

Keys are made inside the scripts from the agent names (one Redis, not a cluster).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from toolrun.calls import keys
from toolrun.calls.envelope import Priority
from toolrun.permissions.levels import QUEUES

FAIR_QUEUES = frozenset(QUEUES)

# KEYS: interactive ring, batch ring, workers, slots, sent (handed out), turn, waiting
# counts, keys.SENT, keys.SENT_ENVELOPES, [the agent's open calls].
# ARGV: ahead, batch_every, recheck_s, record key prefix, queue, [call id, priority, agent].
_PUMP = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if ARGV[6] then
    local ring = KEYS[1]
    if ARGV[7] == 'batch' then ring = KEYS[2] end
    if redis.call('RPUSH', ring .. ':' .. ARGV[8], ARGV[6]) == 1 then
        redis.call('LPUSH', ring, ARGV[8])
    end
    redis.call('HINCRBY', KEYS[7], 'q:' .. ARGV[5], 1)
    redis.call('HINCRBY', KEYS[7], 'a:' .. ARGV[8], 1)
    redis.call('ZADD', KEYS[10], 'NX', now, ARGV[6])
end
local slots = 0
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], now, '+inf')) do
    slots = slots + (tonumber(redis.call('HGET', KEYS[4], name)) or 1)
end
if slots == 0 then
    return {}
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now - tonumber(ARGV[3]))) do
    local raw = redis.call('GET', ARGV[4] .. id)
    local status = raw and cjson.decode(raw)['status']
    if status == 'queued' or status == 'running' then
        redis.call('ZADD', KEYS[5], now, id)
    else
        redis.call('ZREM', KEYS[5], id)
    end
end
local room = slots + tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[5])
local taken = {}
while room > 0 do
    local turn = redis.call('INCR', KEYS[6])
    local ring = KEYS[1]
    if redis.call('LLEN', KEYS[1]) == 0
        or (turn % (tonumber(ARGV[2]) + 1) == 0 and redis.call('LLEN', KEYS[2]) > 0) then
        ring = KEYS[2]
    end
    local agent = redis.call('LPOP', ring)
    if not agent then
        break
    end
    local list = ring .. ':' .. agent
    local id = redis.call('LPOP', list)
    if redis.call('LLEN', list) > 0 then
        redis.call('RPUSH', ring, agent)
    end
    if id then
        redis.call('HINCRBY', KEYS[7], 'q:' .. ARGV[5], -1)
        redis.call('HINCRBY', KEYS[7], 'a:' .. agent, -1)
        local envelope = redis.call('HGET', KEYS[9], id)
        local raw = redis.call('GET', ARGV[4] .. id)
        if envelope and raw and cjson.decode(raw)['status'] == 'queued' then
            redis.call('ZADD', KEYS[5], now, id)
            redis.call('ZADD', KEYS[8], now, id)
            taken[#taken + 1] = envelope
            room = room - 1
        end
    end
end
return taken
"""
# A call on a queue of one machine, sent straight to the broker: noted as sent (for the
# reapers) and as one of its agent's open calls. KEYS: keys.SENT, the agent's open calls.
_SENT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
return 1
"""


def agent_key(agent_id: str | None) -> str:
    """How an agent is named in the queues' keys (calls of no agent share one name)."""
    return agent_id or keys.NO_AGENT


@dataclass(frozen=True)
class Waiting:
    """Calls waiting for a worker, not yet handed out: on a queue, or of an agent."""

    queued: int
    open: int  # queued or running (an agent's); handed out, not ended (a queue's)


class FairQueues:
    """The waiting calls of the shared queues, in Redis (see the module)."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        ahead: int,
        batch_every: int,
        recheck_s: float = 30.0,
    ) -> None:
        self.client = client
        self.ahead = ahead
        self.batch_every = batch_every
        self.recheck_s = recheck_s
        self._pump = client.register_script(_PUMP)
        self._sent = client.register_script(_SENT)

    @staticmethod
    def is_fair(queue: str) -> bool:
        return queue in FAIR_QUEUES

    def add(self, call_id: str, queue: str, priority: Priority, agent_id: str | None) -> list[str]:
        """Put a queued call (its envelope kept with its record: `CallStore.create`) in
        its agent's list on a shared `queue`, then take what the workers have room for.
        Returns the envelopes (JSON) taken, for the broker."""
        agent = agent_key(agent_id)
        extra_keys = [keys.agent_open(agent)]
        extra_args: list[str | int | float] = [call_id, priority.value, agent]
        return self._run(queue, extra_keys, extra_args)

    def pump(self, queue: str) -> list[str]:
        """The envelopes (JSON) of the calls a shared `queue`'s workers have room for, in
        turn, now noted as handed out; empty when nothing waits or nothing is free."""
        return self._run(queue, [], [])

    def note_sent(self, call_id: str, agent_id: str | None) -> None:
        """A call about to be sent straight to the broker (a machine's queue)."""
        self._sent(keys=[keys.SENT, keys.agent_open(agent_key(agent_id))], args=[call_id])

    def _run(
        self, queue: str, extra_keys: list[str], extra_args: list[str | int | float]
    ) -> list[str]:
        script_keys = [
            keys.fair_ring(queue, Priority.INTERACTIVE),
            keys.fair_ring(queue, Priority.BATCH),
            keys.fair_workers(queue),
            keys.FAIR_SLOTS,
            keys.fair_sent(queue),
            keys.fair_turn(queue),
            keys.FAIR_WAITING,
            keys.SENT,
            keys.SENT_ENVELOPES,
            *extra_keys,
        ]
        args: list[str | int | float] = [
            self.ahead,
            self.batch_every,
            self.recheck_s,
            keys.RECORD_PREFIX,
            queue,
        ]
        taken: Any = self._pump(keys=script_keys, args=[*args, *extra_args])
        return [item.decode() if isinstance(item, bytes) else item for item in taken]

    def of_queue(self, queue: str) -> Waiting:
        """How many calls wait on `queue`, and how many its workers hold."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(keys.FAIR_WAITING, f"q:{queue}")
        pipe.zcard(keys.fair_sent(queue))
        waiting, sent = pipe.execute()
        return Waiting(queued=int(waiting or 0), open=int(sent))

    def of_agent(self, agent_id: str | None) -> Waiting:
        """How many of an agent's calls wait for a worker, and how many are open."""
        agent = agent_key(agent_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(keys.FAIR_WAITING, f"a:{agent}")
        pipe.zcard(keys.agent_open(agent))
        waiting, open_ = pipe.execute()
        return Waiting(queued=max(0, int(waiting or 0)), open=int(open_))

    def slots(self, queue: str) -> int:
        """The pool sizes of the live workers of `queue`, together."""
        names: Any = self.client.zrangebyscore(keys.fair_workers(queue), _now(self.client), "+inf")
        if not names:
            return 0
        sizes: Any = self.client.hmget(keys.FAIR_SLOTS, names)
        return sum(int(size or 1) for size in sizes)


def _now(client: redis.Redis) -> float:
    seconds, micros = client.time()  # Redis's clock, which the presence scores use
    return seconds + micros / 1_000_000

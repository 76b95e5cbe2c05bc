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
many it has queued). An agent that had nothing waiting joins a list of newcomers, served
first come first served, which takes every other turn with the ring: an agent making one
call at a time waits for one or two slots to free, never behind a flood, and newcomers
cannot starve the ring either. Interactive calls go first; batch work
(DAG nodes, calls marked `priority: batch`) gets every `batch_every + 1`-th turn while
interactive calls wait, so it is never starved. Whoever frees or adds work pumps: the
API as it queues a call (in the script that records it: `calls.queueing`), a worker as it
ends one (in the script that stores the ending: `CallStore.finish`), a worker as it
starts, the reapers every few seconds (a pump lost to a crash is made up there).
Everything happens in one Lua script per pump, so concurrent pumps never hand out a slot
twice. The script also puts each call it hands out on the broker: a call waits in its
list with its delivery (`workers.messages`, built when it was admitted), which the pump
pushes on the queue's list, so a call is never handed out and then lost on its way.

A call recorded but not yet in its agent's list (an approved call whose sender died in
between), and a call handed out whose message the broker then lost (a worker killed as
it took it), are in `keys.SENT`, which the reapers resend from; a call waiting its turn
is not. A call handed out with no delivery kept (queued by an older toolrun) is noted
there as sent at time 0, so the reapers' next round sends it. A call handed out counts
until its ending removes it (`CallStore.finish`, which also takes a call ending while it
waits out of its list, with its delivery); one whose ending was lost (its record
expired) is dropped after `recheck_s` by the pump that finds it. A worker gone for
DEAD_WORKER_S is forgotten.

Keys are made inside the scripts from the agent names (one Redis, not a cluster).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis

from toolrun.calls import keys
from toolrun.calls.envelope import Priority
from toolrun.calls.lua import LuaScript
from toolrun.permissions.levels import QUEUES

FAIR_QUEUES = frozenset(QUEUES)
DEAD_WORKER_S = 600  # a worker gone this long is dropped from its queue's list

# Lua shared by the scripts here, in `calls.quotas` and in `CallStore.finish`.
# `now`: Redis's clock (the presence scores use it); `count`: add to a count, dropping it
# at zero; `recheck`: of the calls in a sorted set noted before `before`, keep (noted again
# now) those whose record still says queued or running, drop the others (a lost ending).
LUA_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""
LUA_COUNT = """
local function count(key, field, delta)
    if redis.call('HINCRBY', key, field, delta) <= 0 then
        redis.call('HDEL', key, field)
    end
end
"""
LUA_RECHECK = f"""
local function recheck(set, before)
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', set, '-inf', before)) do
        local raw = redis.call('GET', '{keys.RECORD_PREFIX}' .. id)
        local status = raw and cjson.decode(raw)['status']
        if status == 'queued' or status == 'running' then
            redis.call('ZADD', set, now, id)
        else
            redis.call('ZREM', set, id)
        end
    end
end
"""
# `withdraw`: take a call that ends while it waits (cancelled, denied) out of its agent's
# list, given its envelope (JSON) and the waiting counts' key. A call already handed out
# (in its queue's `keys.fair_sent`) left the list then: its list, which may hold an
# agent's max_queued calls, is not scanned for it.
LUA_WITHDRAW = (
    LUA_COUNT
    + f"""
local function withdraw(raw, id, counts)
    local ok, envelope = pcall(cjson.decode, raw)
    if not ok or type(envelope) ~= 'table' or type(envelope['call']) ~= 'table' then
        return
    end
    local queue, priority = envelope['queue'], envelope['priority'] or 'interactive'
    local agent = envelope['call']['agent_id']
    if type(agent) ~= 'string' then
        agent = '{keys.NO_AGENT}'
    end
    if type(queue) ~= 'string' or type(priority) ~= 'string' then
        return
    end
    if redis.call('ZSCORE', '{keys.FAIR}:' .. queue .. ':sent', id) then
        return
    end
    local ring = '{keys.FAIR}:' .. queue .. ':' .. priority
    local list = ring .. ':agent:' .. agent
    if redis.call('LREM', list, 1, id) > 0 then
        count(counts, 'q:' .. queue, -1)
        count(counts, 'a:' .. agent, -1)
        if redis.call('LLEN', list) == 0 then
            redis.call('LREM', ring, 0, agent)
            redis.call('LREM', ring .. ':new', 0, agent)
        end
    end
end
"""
)
# `deliver`: put a call on the broker, given its delivery (`workers.messages.Delivery`,
# as JSON): its message on its queue's list, its task-sent event on the events' channel.
LUA_DELIVER = """
local function deliver(raw)
    local delivery = cjson.decode(raw)
    redis.call('LPUSH', delivery['queue'], delivery['message'])
    if delivery['event'] then
        redis.call('PUBLISH', delivery['channel'], delivery['event'])
    end
end
"""


def lua_function(name: str, body: str) -> str:
    """A script's `body` as a Lua function of its own KEYS and ARGV, so that several
    scripts' steps run as one script: one round trip, one atomic step (`Step`)."""
    return f"local function {name}(KEYS, ARGV)\n{body}\nend\n"


# `steps(count)`: the steps a script was given by `joined`, each its function's `name`
# and its own `keys` and `args` (a slice of KEYS and of ARGV).
LUA_STEPS = """
local function part(items, first, count)
    local out = {}
    for i = 1, count do
        out[i] = items[first + i - 1]
    end
    return out
end
local function steps(count)
    local found, k, a = {}, 1, 3 * count + 1
    for i = 1, count do
        local n_keys, n_args = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
        found[i] = {
            name = ARGV[3 * i - 2], keys = part(KEYS, k, n_keys), args = part(ARGV, a, n_args)
        }
        k, a = k + n_keys, a + n_args
    end
    return found
end
"""


@dataclass(frozen=True)
class Step:
    """One script's step run inside another script (`lua_function`): which function, and
    its KEYS and ARGV."""

    function: str
    keys: list[str]
    args: list[str | int | float] = field(default_factory=list)


def joined(*steps: Step) -> tuple[list[str], list[str | int | float]]:
    """The KEYS and ARGV of a script that runs `steps` (`LUA_STEPS`): each step's function
    name and sizes first, then every step's ARGV, in order, as KEYS are."""
    header: list[str | int | float] = []
    for step in steps:
        header += [step.function, len(step.keys), len(step.args)]
    all_keys = [key for step in steps for key in step.keys]
    return all_keys, header + [arg for step in steps for arg in step.args]


# KEYS: interactive ring, batch ring, workers, slots, sent (handed out), turn, waiting
# counts, keys.SENT, keys.SENT_ENVELOPES, keys.SENT_MESSAGES, [the agent's open calls,
# keys.AGENTS_OPEN]. ARGV: ahead, batch_every, recheck_s, queue, [call id, priority,
# agent, its delivery].
# An agent joining a priority goes on the ring's `:new` list; the ring and it take turns.
# A call taken is put on the broker here (its delivery). Returns the ids taken.
LUA_PUMP = lua_function(
    "pump",
    LUA_NOW
    + LUA_COUNT
    + LUA_RECHECK
    + LUA_DELIVER
    + f"""
if ARGV[5] then
    local ring = KEYS[1]
    if ARGV[6] == 'batch' then ring = KEYS[2] end
    if redis.call('RPUSH', ring .. ':agent:' .. ARGV[7], ARGV[5]) == 1 then
        redis.call('RPUSH', ring .. ':new', ARGV[7])
    end
    count(KEYS[7], 'q:' .. ARGV[4], 1)
    count(KEYS[7], 'a:' .. ARGV[7], 1)
    redis.call('HSET', KEYS[10], ARGV[5], ARGV[8])
    redis.call('ZADD', KEYS[11], 'NX', now, ARGV[5])
    redis.call('SADD', KEYS[12], ARGV[7])
    redis.call('ZREM', KEYS[8], ARGV[5])
end
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - {DEAD_WORKER_S})) do
    redis.call('ZREM', KEYS[3], name)
    redis.call('HDEL', KEYS[4], name)
end
local slots = 0
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], now, '+inf')) do
    slots = slots + (tonumber(redis.call('HGET', KEYS[4], name)) or 1)
end
if slots == 0 then
    return {{}}
end
recheck(KEYS[5], now - tonumber(ARGV[3]))
local function next_agent(ring)
    local fresh = ring .. ':new'
    if redis.call('LLEN', fresh) > 0
        and (redis.call('LLEN', ring) == 0 or redis.call('INCR', ring .. ':turn') % 2 == 1) then
        return redis.call('LPOP', fresh)
    end
    return redis.call('LPOP', ring)
end
local room = slots + tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[5])
local taken = {{}}
while room > 0 do
    local ring = KEYS[1]
    local waiting = redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[1] .. ':new')
    local batch = redis.call('LLEN', KEYS[2]) + redis.call('LLEN', KEYS[2] .. ':new')
    if waiting + batch == 0 then
        break
    end
    if batch > 0 and (waiting == 0
        or redis.call('INCR', KEYS[6]) % (tonumber(ARGV[2]) + 1) == 0) then
        ring = KEYS[2]
    end
    local agent = next_agent(ring)
    local list = ring .. ':agent:' .. agent
    local id = redis.call('LPOP', list)
    if redis.call('LLEN', list) > 0 then
        redis.call('RPUSH', ring, agent)
    end
    if id then
        count(KEYS[7], 'q:' .. ARGV[4], -1)
        count(KEYS[7], 'a:' .. agent, -1)
        local delivery = redis.call('HGET', KEYS[10], id)
        redis.call('HDEL', KEYS[10], id)
        local raw = redis.call('GET', '{keys.RECORD_PREFIX}' .. id)
        if redis.call('HEXISTS', KEYS[9], id) == 1 and raw
            and cjson.decode(raw)['status'] == 'queued' then
            redis.call('ZADD', KEYS[5], now, id)
            if delivery then
                redis.call('ZADD', KEYS[8], now, id)
                deliver(delivery)
            else  -- queued by an older toolrun: noted as sent long ago, the reapers'
                redis.call('ZADD', KEYS[8], 0, id)  -- next round sends it
            end
            taken[#taken + 1] = id
            room = room - 1
        end
    end
end
return taken
""",
)
# A call on a queue of one machine, sent straight to the broker: one of its agent's open
# calls, then its delivery. KEYS: the agent's open calls, keys.AGENTS_OPEN. ARGV: call id,
# agent, its delivery. Returns the call's id.
LUA_OPEN = lua_function(
    "open",
    LUA_NOW
    + LUA_DELIVER
    + """
redis.call('ZADD', KEYS[1], 'NX', now, ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
deliver(ARGV[3])
return {ARGV[1]}
""",
)
_PUMP = LUA_PUMP + "return pump(KEYS, ARGV)"
_OPEN = LUA_OPEN + "return open(KEYS, ARGV)"


def agent_key(agent_id: str | None) -> str:
    """How an agent is named in the queues' keys (calls of no agent share one name)."""
    return agent_id or keys.NO_AGENT


@dataclass(frozen=True)
class AgentUse:
    """An agent's calls waiting for a worker, and queued or running (both counts)."""

    queued: int
    in_flight: int


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
        self._pump = LuaScript(client, _PUMP)
        self._open = LuaScript(client, _OPEN)

    @staticmethod
    def is_fair(queue: str) -> bool:
        return queue in FAIR_QUEUES

    def add(
        self, call_id: str, queue: str, priority: Priority, agent_id: str | None, delivery: str
    ) -> list[str]:
        """Put a queued call (its envelope kept with its record: `CallStore.create`) in
        its agent's list on a shared `queue`, with its `delivery` (JSON: see
        `workers.messages.Delivery`), then hand out what the workers have room for.
        Returns the ids handed out (their deliveries are on the broker)."""
        return self._run(self.add_step(call_id, queue, priority, agent_id, delivery))

    def pump(self, queue: str) -> list[str]:
        """Hand out the calls a shared `queue`'s workers have room for, in turn: each is
        noted as handed out and its delivery put on the broker. Returns their ids; empty
        when nothing waits or nothing is free."""
        return self._run(self.pump_step(queue))

    def place(self, step: Step) -> list[str]:
        """Run a step that places a call (`add_step`, `open_step`) on its own; returns the
        ids handed out (their deliveries are on the broker)."""
        script = {"add": self._pump, "open": self._open}.get(step.function)
        if script is None:
            raise ValueError(f"a call is placed by add or open, not {step.function}")
        return decoded(script(keys=step.keys, args=step.args))

    def add_step(
        self, call_id: str, queue: str, priority: Priority, agent_id: str | None, delivery: str
    ) -> Step:
        """`add` as a step of another script (`LUA_PUMP`, named "add": a pump that adds a
        call, not one that only takes what waits)."""
        agent = agent_key(agent_id)
        step = self.pump_step(queue)
        return Step(
            "add",
            [*step.keys, keys.agent_open(agent), keys.AGENTS_OPEN],
            [*step.args, call_id, priority.value, agent, delivery],
        )

    def pump_step(self, queue: str) -> Step:
        """`pump` as a step of another script (`LUA_PUMP`)."""
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
            keys.SENT_MESSAGES,
        ]
        return Step("pump", script_keys, [self.ahead, self.batch_every, self.recheck_s, queue])

    @staticmethod
    def open_step(call_id: str, agent_id: str | None, delivery: str) -> Step:
        """A call put straight on the broker (a machine's queue), among its agent's open
        calls: a step of a script (`LUA_OPEN`)."""
        agent = agent_key(agent_id)
        return Step("open", [keys.agent_open(agent), keys.AGENTS_OPEN], [call_id, agent, delivery])

    def handed_out(self, queue: str, call_id: str) -> bool:
        """True when the call was taken for `queue`'s workers (and has not ended)."""
        return self.client.zscore(keys.fair_sent(queue), call_id) is not None

    def _run(self, step: Step) -> list[str]:
        return decoded(self._pump(keys=step.keys, args=step.args))

    def waiting(self, queue: str) -> int:
        """How many calls wait on `queue` for their turn."""
        return int(self.client.hget(keys.FAIR_WAITING, f"q:{queue}") or 0)

    def of_agent(self, agent_id: str | None) -> AgentUse:
        """How many of an agent's calls wait for a worker, and how many are open."""
        agent = agent_key(agent_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(keys.FAIR_WAITING, f"a:{agent}")
        pipe.zcard(keys.agent_open(agent))
        waiting, open_ = pipe.execute()
        return AgentUse(queued=int(waiting or 0), in_flight=int(open_))

    def slots(self, queue: str) -> int:
        """The pool sizes of the live workers of `queue`, together."""
        names: Any = self.client.zrangebyscore(keys.fair_workers(queue), _now(self.client), "+inf")
        if not names:
            return 0
        sizes: Any = self.client.hmget(keys.FAIR_SLOTS, names)
        return sum(int(size or 1) for size in sizes)


def decoded(items: Any) -> list[str]:
    """A script's answer of strings, as str."""
    return [item.decode() if isinstance(item, bytes) else item for item in items]


def _now(client: redis.Redis) -> float:
    seconds, micros = client.time()  # Redis's clock, which the presence scores use
    return seconds + micros / 1_000_000

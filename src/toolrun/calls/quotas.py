"""Quotas and backpressure, checked as an agent's call is about to be queued.

One Lua script checks, in order: the queue's bound (the platform's backpressure, answered
503), then the agent's calls waiting for a worker, its open calls (queued or running), and
last its calls per second (a token bucket refilled at the rate, holding `Quota.bucket_size`),
whose token a call takes only when every other check passed. A refusal is counted per agent
and quota (`keys.THROTTLED`, for Prometheus); nothing else is written.

The counts are the fair queues' own (`calls.fairness`). A new call's check runs in the
same script as its queueing (`calls.queueing`), so calls sent at the same moment cannot
pass a count quota together. Open calls whose ending was lost (their record expired) are
dropped by the check that finds the agent at its limit (and an agent left with none, from
`keys.AGENTS_OPEN`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import redis

from toolrun.calls import keys
from toolrun.calls.fairness import LUA_NOW, LUA_RECHECK, Step, agent_key, lua_function
from toolrun.calls.lua import LuaScript
from toolrun.errors import Overloaded, QuotaExceeded, TryLater
from toolrun.permissions.quotas import Quota

# Retry-After for a count quota or a full queue: about one call's time.
COUNT_RETRY_S = 1.0
# The security log records one refusal per agent and quota in this many seconds (a flood
# of refused calls is one event; Prometheus counts each).
SAID_EVERY_S = 10

# KEYS: waiting counts, the agent's open calls, its bucket, keys.THROTTLED,
# keys.AGENTS_OPEN.
# ARGV: queue, agent, queue bound, max queued, max in flight, rate, bucket size, recheck_s,
# how long one refusal stands for the next (s), the bucket's time to live (ms). Returns
# {0, 0, 0} when the call may be queued, else {quota, retry in ms, 1 if the first refusal
# of this agent and quota in that time}.
LUA_CHECK = lua_function(
    "check_quota",
    LUA_NOW
    + LUA_RECHECK
    + """
local function refuse(quota, retry_ms)
    local field = ARGV[2] .. '|' .. quota
    redis.call('HINCRBY', KEYS[4], field, 1)
    local first = redis.call('SET', KEYS[4] .. ':said:' .. field, 1, 'NX', 'EX', ARGV[9])
    return {quota, retry_ms, first and 1 or 0}
end
local bound = tonumber(ARGV[3])
if bound > 0 and (tonumber(redis.call('HGET', KEYS[1], 'q:' .. ARGV[1])) or 0) >= bound then
    return refuse('queue_bound', 0)
end
local max_queued = tonumber(ARGV[4])
if max_queued > 0
    and (tonumber(redis.call('HGET', KEYS[1], 'a:' .. ARGV[2])) or 0) >= max_queued then
    return refuse('max_queued', 0)
end
local max_open = tonumber(ARGV[5])
if max_open > 0 and redis.call('ZCARD', KEYS[2]) >= max_open then
    recheck(KEYS[2], now - tonumber(ARGV[8]))
    local open = redis.call('ZCARD', KEYS[2])
    if open == 0 then  -- every one lost: no longer an agent with open calls (as an ending)
        redis.call('SREM', KEYS[5], ARGV[2])
    end
    if open >= max_open then
        return refuse('max_in_flight', 0)
    end
end
local rate = tonumber(ARGV[6])
if rate > 0 then
    local size = tonumber(ARGV[7])
    local bucket = redis.call('HMGET', KEYS[3], 'tokens', 'at')
    local tokens = tonumber(bucket[1]) or size
    local at = tonumber(bucket[2]) or now
    tokens = math.min(size, tokens + math.max(0, now - at) * rate)
    if tokens < 1 then
        return refuse('rate_per_s', math.ceil((1 - tokens) / rate * 1000))
    end
    redis.call('HSET', KEYS[3], 'tokens', tostring(tokens - 1), 'at', tostring(now))
    redis.call('PEXPIRE', KEYS[3], ARGV[10])
end
return {0, 0, 0}
""",
)
_CHECK = LUA_CHECK + "return check_quota(KEYS, ARGV)"


@dataclass(frozen=True)
class Throttled:
    """Calls refused for one quota of one agent (`queue_bound`: the queue was full)."""

    agent: str
    quota: str
    count: int


class QuotaGate:
    """Checks an agent's quotas and its queue's bound before a call is queued."""

    def __init__(self, client: redis.Redis, *, queue_bound: int, recheck_s: float = 30.0) -> None:
        self.client = client
        self.queue_bound = queue_bound
        self.recheck_s = recheck_s
        self._check = LuaScript(client, _CHECK)

    def check(self, agent_id: str | None, agent_name: str | None, quota: Quota, queue: str) -> None:
        """Take one of the agent's tokens if the call may be queued on `queue` now.

        Raises:
            QuotaExceeded: the agent is over a quota (the message names it).
            Overloaded: `queue` already holds `queue_bound` waiting calls.
            Either has `first` set when it is the first such refusal in SAID_EVERY_S.
        """
        step = self.check_step(agent_id, quota, queue)
        answer: Any = self._check(keys=step.keys, args=step.args)
        refusal = refusal_of(answer, agent_name or agent_key(agent_id), quota, queue)
        if refusal is not None:
            raise refusal

    def check_step(self, agent_id: str | None, quota: Quota, queue: str) -> Step:
        """`check` as a step of another script (`LUA_CHECK`); its answer goes to
        `refusal_of`."""
        agent = agent_key(agent_id)
        script_keys = [
            keys.FAIR_WAITING,
            keys.agent_open(agent),
            keys.agent_bucket(agent),
            keys.THROTTLED,
            keys.AGENTS_OPEN,
        ]
        args: list[str | int | float] = [
            queue,
            agent,
            self.queue_bound,
            quota.max_queued or 0,
            quota.max_in_flight or 0,
            quota.rate_per_s or 0,
            quota.bucket_size,
            self.recheck_s,
            SAID_EVERY_S,
            _bucket_ttl_ms(quota),
        ]
        return Step("check_quota", script_keys, args)

    def throttled(self) -> list[Throttled]:
        """Every count of refused calls, by agent and quota."""
        raw: Any = self.client.hgetall(keys.THROTTLED)
        found = []
        for field, count in raw.items():
            agent, _, quota = field.decode().rpartition("|")
            found.append(Throttled(agent, quota, int(count)))
        return sorted(found, key=lambda item: (item.agent, item.quota))


def refusal_of(answer: Any, agent: str, quota: Quota, queue: str) -> TryLater | None:
    """What `LUA_CHECK` answered ({quota, retry in ms, first}) as the refusal to raise, with
    `first` set for the first such refusal in SAID_EVERY_S; None when the call may go."""
    refused = answer[0].decode() if isinstance(answer[0], bytes) else answer[0]
    if refused == 0:
        return None
    refusal = _refusal(str(refused), int(answer[1]) / 1000, agent, quota, queue)
    refusal.first = bool(answer[2])
    return refusal


def _bucket_ttl_ms(quota: Quota) -> int:
    """How long an agent's bucket is kept unused: until it would be full again, and a
    second more (a whole number of ms: Redis takes nothing else)."""
    if not quota.rate_per_s:
        return 1000
    return math.ceil(quota.bucket_size / quota.rate_per_s * 1000) + 1000


def _refusal(quota: str, retry_s: float, agent: str, limits: Quota, queue: str) -> TryLater:
    retry_s = max(retry_s, COUNT_RETRY_S) if quota != "rate_per_s" else max(retry_s, 0.001)
    if quota == "queue_bound":
        return Overloaded(
            f"queue {queue} is full (calls waiting reached its bound); try again shortly",
            retry_s,
        )
    said = {
        "max_queued": f"{limits.max_queued} calls waiting for a worker",
        "max_in_flight": f"{limits.max_in_flight} calls queued or running",
        "rate_per_s": f"{limits.rate_per_s:g} calls per second (bursts of {limits.bucket_size:g})",
    }[quota]
    return QuotaExceeded(
        f"agent {agent} is over its quota {quota}: {said}; retry after {math.ceil(retry_s)} s",
        retry_s,
        quota,
    )

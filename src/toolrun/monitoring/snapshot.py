"""The shared counters, the queues' depths and their workers, read from Redis in two round
trips."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis.asyncio as aioredis
from kombu.transport.redis import PRIORITY_STEPS, Channel

from toolrun.calls import keys
from toolrun.calls.fairness import DEAD_WORKER_S
from toolrun.monitoring.metrics import BUCKET_LABELS, CALLS, DURATION, SUM, WAIT
from toolrun.permissions.levels import DELEGATION_QUEUE, PermissionLevel


@dataclass
class Durations:
    """One series' times (a tool's executions, a queue's waits): how many fell in each
    bucket (not cumulative), the sum."""

    buckets: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BUCKET_LABELS, 0))
    sum: float = 0.0

    @property
    def count(self) -> int:
        return sum(self.buckets.values())

    def cumulative(self) -> list[tuple[str, float]]:
        """(le, executions at most that long), ``+Inf`` last: Prometheus's buckets."""
        total, out = 0, []
        for label in BUCKET_LABELS:
            total += self.buckets[label]
            out.append((label, float(total)))
        return out


@dataclass(frozen=True)
class Workers:
    """A queue's worker processes: alive, their pool processes, and those lost lately
    (gone without signing off — killed, crashed, their machine away — in the last
    `DEAD_WORKER_S`: a worker that stops cleanly removes its own entry)."""

    alive: int = 0
    slots: int = 0
    lost: int = 0


@dataclass
class Snapshot:
    """What /metrics reports, as read at one moment."""

    calls: dict[tuple[str, str], int] = field(default_factory=dict)  # (tool, status) → count
    durations: dict[str, Durations] = field(default_factory=dict)  # tool → its histogram
    queue_depths: dict[str, int] = field(default_factory=dict)  # label → calls waiting
    queue_waits: dict[str, Durations] = field(default_factory=dict)  # label → time waited
    workers: dict[str, Workers] = field(default_factory=dict)  # label → its workers
    agents_queued: dict[str, int] = field(default_factory=dict)  # agent id → calls waiting
    agents_in_flight: dict[str, int] = field(default_factory=dict)  # → calls queued or running
    throttled: dict[tuple[str, str], int] = field(default_factory=dict)  # (agent, quota) → refused


# The queues whose depth is reported, by label: each level's, and the task tool's.
QUEUE_LABELS = {
    **{level.value: level.queue_name for level in PermissionLevel},
    "delegation": DELEGATION_QUEUE,
}


# Each queue's live workers (by Redis's clock, which their presence scores use), their pool
# sizes together, and the workers whose presence ran out in the last ARGV[1] seconds.
_WORKERS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local out = {}
for i = 2, #KEYS do
    local alive = redis.call('ZRANGEBYSCORE', KEYS[i], now, '+inf')
    local slots = 0
    for _, name in ipairs(alive) do
        slots = slots + (tonumber(redis.call('HGET', KEYS[1], name)) or 1)
    end
    local lost = redis.call('ZCOUNT', KEYS[i], now - tonumber(ARGV[1]), '(' .. now)
    table.insert(out, {#alive, slots, lost})
end
return out
"""


def queue_keys(queue: str) -> list[str]:
    """The Redis lists kombu keeps a queue in: the queue's name for priority 0, one more
    per priority step (``<queue>\\x06\\x16<step>``) for messages sent with a priority."""
    return [queue, *(f"{queue}{Channel.sep}{step}" for step in PRIORITY_STEPS if step)]


async def read_snapshot(client: aioredis.Redis) -> Snapshot:
    """Every counter, queue depth, queue's workers and agent's use, in two round trips
    (raises redis.RedisError when Redis is down). A queue's depth counts the calls waiting
    their agents' turns (`calls.fairness`) and the messages in the broker."""
    pipe = client.pipeline(transaction=False)
    pipe.hgetall(CALLS)
    pipe.hgetall(DURATION)
    pipe.hgetall(WAIT)
    pipe.hgetall(keys.FAIR_WAITING)
    pipe.hgetall(keys.THROTTLED)
    pipe.smembers(keys.AGENTS_OPEN)
    worker_sets = [keys.fair_workers(queue) for queue in QUEUE_LABELS.values()]
    pipe.eval(_WORKERS, 1 + len(worker_sets), keys.FAIR_SLOTS, *worker_sets, DEAD_WORKER_S)
    for queue in QUEUE_LABELS.values():
        for key in queue_keys(queue):
            pipe.llen(key)
    (
        calls,
        durations,
        waits,
        waiting_raw,
        throttled,
        open_agents,
        workers,
        *lengths,
    ) = await pipe.execute()
    waiting = {name.decode(): int(count) for name, count in waiting_raw.items()}
    agents = sorted(agent.decode() for agent in open_agents)
    pipe = client.pipeline(transaction=False)
    for agent in agents:
        pipe.zcard(keys.agent_open(agent))
    in_flight = await pipe.execute() if agents else []
    per_queue = len(lengths) // len(QUEUE_LABELS)
    return Snapshot(
        calls=_calls(calls),
        durations=_histograms(durations),
        queue_waits=_histograms(waits),
        workers={
            label: Workers(*map(int, counts))
            for label, counts in zip(QUEUE_LABELS, workers, strict=True)
        },
        queue_depths={
            label: sum(lengths[i * per_queue : (i + 1) * per_queue])
            + max(0, waiting.get(f"q:{queue}", 0))
            for i, (label, queue) in enumerate(QUEUE_LABELS.items())
        },
        agents_queued={agent: max(0, waiting.get(f"a:{agent}", 0)) for agent in agents},
        agents_in_flight=dict(zip(agents, map(int, in_flight), strict=True)),
        throttled=_throttled(throttled),
    )


def _throttled(raw: dict[bytes, bytes]) -> dict[tuple[str, str], int]:
    counts = {}
    for name, value in raw.items():
        agent, _, quota = name.decode().rpartition("|")
        counts[agent, quota] = int(value)
    return counts


def _calls(raw: dict[bytes, bytes]) -> dict[tuple[str, str], int]:
    counts = {}
    for name, value in raw.items():
        status, tool = name.decode().split(":", 1)
        counts[tool, status] = int(value)
    return counts


def _histograms(raw: dict[bytes, bytes]) -> dict[str, Durations]:
    """A histogram hash's series by label (a tool, a level)."""
    series: dict[str, Durations] = {}
    for name, value in raw.items():
        part, label = name.decode().split(":", 1)
        histogram = series.setdefault(label, Durations())
        if part == SUM:
            histogram.sum = float(value)
        elif part in histogram.buckets:  # a bound dropped since: not reported
            histogram.buckets[part] = int(value)
    return series

"""The quota gate on a real Redis: each quota refuses with its name and a Retry-After, a
token bucket refills at its rate, a full queue is backpressure (not the agent's quota),
refusals are counted, only the first of a burst is worth a security event, and open calls
whose endings were lost are dropped, their agent with them once it has none."""

from __future__ import annotations

import json
import time

import anyio
import pytest
import redis
import redis.asyncio as aioredis

from toolrun.calls import keys
from toolrun.calls.envelope import Priority
from toolrun.calls.fairness import FairQueues
from toolrun.calls.quotas import QuotaGate, Throttled
from toolrun.calls.store import CallStore
from toolrun.errors import Overloaded, QuotaExceeded
from toolrun.monitoring import Snapshot, read_snapshot
from toolrun.permissions.quotas import Quota
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.presence import Presence

QUEUE = "tools.read_only"
NONE = Quota(rate_per_s=0, burst=0, max_in_flight=0, max_queued=0)


def gate(client: redis.Redis, bound: int = 0) -> QuotaGate:
    return QuotaGate(client, queue_bound=bound)


def queue_calls(client: redis.Redis, agent: str, count: int) -> None:
    """`count` calls of `agent` queued (no worker: they wait)."""
    store = CallStore(client, ttl_s=600)
    queues = FairQueues(client, ahead=0, batch_every=4)
    for number in range(count):
        call = ToolCall(id=f"{agent}-{number}", tool_name="read", version="1.0.0")
        assert store.create(ToolResult.accepted(call, ToolStatus.QUEUED), request="r")
        delivery = json.dumps({"queue": "tests:broker", "message": call.id})  # never sent
        queues.add(call.id, QUEUE, Priority.INTERACTIVE, agent, delivery)


def test_no_quota_refuses_nothing(redis_client: redis.Redis) -> None:
    quotas = gate(redis_client)
    for _ in range(100):
        quotas.check("a", "a", NONE, QUEUE)


def test_the_rate_allows_a_burst_then_one_call_per_interval(redis_client: redis.Redis) -> None:
    quotas = gate(redis_client)
    quota = Quota(rate_per_s=5, burst=3, max_in_flight=0, max_queued=0)
    for _ in range(3):
        quotas.check("a", "alice", quota, QUEUE)

    with pytest.raises(QuotaExceeded) as refused:
        quotas.check("a", "alice", quota, QUEUE)

    assert refused.value.quota == "rate_per_s"
    assert "alice" in str(refused.value)
    assert "5 calls per second" in str(refused.value)
    assert 0 < refused.value.retry_after_s <= 0.2  # one token at 5 per second
    time.sleep(refused.value.retry_after_s + 0.02)
    quotas.check("a", "alice", quota, QUEUE)  # refilled
    quotas.check("b", "bob", quota, QUEUE)  # another agent's bucket is its own


def test_calls_waiting_and_calls_open_are_capped(redis_client: redis.Redis) -> None:
    quotas = gate(redis_client)
    queue_calls(redis_client, "a", 3)

    with pytest.raises(QuotaExceeded) as waiting:
        quotas.check("a", "alice", Quota(max_queued=3, max_in_flight=0, rate_per_s=0), QUEUE)
    with pytest.raises(QuotaExceeded) as open_:
        quotas.check("a", "alice", Quota(max_queued=0, max_in_flight=3, rate_per_s=0), QUEUE)

    assert (waiting.value.quota, open_.value.quota) == ("max_queued", "max_in_flight")
    assert waiting.value.retry_after_s >= 1
    quotas.check("a", "alice", Quota(max_queued=4, max_in_flight=4, rate_per_s=0), QUEUE)


def test_a_full_queue_is_backpressure_for_every_agent(redis_client: redis.Redis) -> None:
    quotas = gate(redis_client, bound=5)
    queue_calls(redis_client, "a", 5)

    with pytest.raises(Overloaded) as full:
        quotas.check("b", "bob", NONE, QUEUE)

    assert "tools.read_only is full" in str(full.value)
    quotas.check("b", "bob", NONE, "tools.execute")  # another queue has room


def test_refusals_are_counted_and_the_first_of_a_burst_is_marked(
    redis_client: redis.Redis,
) -> None:
    quotas = gate(redis_client)
    quota = Quota(rate_per_s=1, burst=1, max_in_flight=0, max_queued=0)
    quotas.check("a", "alice", quota, QUEUE)
    firsts = []
    for _ in range(4):
        with pytest.raises(QuotaExceeded) as refused:
            quotas.check("a", "alice", quota, QUEUE)
        firsts.append(refused.value.first)

    assert firsts == [True, False, False, False]
    assert quotas.throttled() == [Throttled("a", "rate_per_s", 4)]


def test_an_agent_whose_open_calls_were_all_lost_is_no_longer_shown_open(
    redis_client: redis.Redis, redis_url: str
) -> None:
    Presence(redis_client, "w0", ttl_s=30, machine_key=None, queue=QUEUE, slots=2).renew()
    queue_calls(redis_client, "a", 2)  # both handed out to the worker...
    queue_calls(redis_client, "b", 1)
    for number in range(2):
        redis_client.delete(keys.record(f"a-{number}"))  # ...and their endings lost
    quotas = QuotaGate(redis_client, queue_bound=0, recheck_s=0)

    quotas.check("a", "alice", Quota(max_queued=0, max_in_flight=2, rate_per_s=0), QUEUE)

    assert redis_client.smembers(keys.AGENTS_OPEN) == {b"b"}

    async def snapshot() -> Snapshot:
        client = aioredis.Redis.from_url(redis_url)
        try:
            return await read_snapshot(client)
        finally:
            await client.aclose()

    assert anyio.run(snapshot).agents_in_flight == {"b": 1}  # no series of 0 left for a

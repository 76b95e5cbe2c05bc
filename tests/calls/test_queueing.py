"""Queueing a new call in one round trip on a real Redis: a call refused by a quota writes
nothing, a call whose id is taken takes no place in line, a call on a shared queue joins
its agent's list and is handed out when a worker has room, and a call on a machine's queue
is counted among its agent's open calls and put on the broker at once; a call handed
out is on the broker when the script returns."""

from __future__ import annotations

import json

import pytest
import redis

from toolrun.calls import keys
from toolrun.calls.envelope import Priority
from toolrun.calls.fairness import FairQueues, Step
from toolrun.calls.queueing import Queued, Queueing
from toolrun.calls.quotas import QuotaGate, refusal_of
from toolrun.calls.store import CallStore
from toolrun.errors import QuotaExceeded
from toolrun.permissions.quotas import Quota
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.presence import Presence

QUEUE = "tools.read_only"
BROKER = "tests:broker"  # where the calls' deliveries put their messages here
ONE_WAITING = Quota(rate_per_s=0, burst=0, max_in_flight=0, max_queued=1)


@pytest.fixture
def store(redis_client: redis.Redis) -> CallStore:
    return CallStore(redis_client, ttl_s=600)


@pytest.fixture
def queues(redis_client: redis.Redis) -> FairQueues:
    return FairQueues(redis_client, ahead=0, batch_every=4)


def new_call(store: CallStore, call_id: str, agent: str) -> Step:
    """The step that records a queued call of `agent` with its envelope."""
    call = ToolCall(id=call_id, tool_name="read", version="1.0.0", agent_id=agent)
    queued = ToolResult.accepted(call, ToolStatus.QUEUED)
    envelope = json.dumps({"call": {"id": call_id, "agent_id": agent}, "queue": QUEUE})
    return store.create_step(queued, request="r", envelope=envelope)


def delivery(call_id: str) -> str:
    """A stand-in for a call's delivery (`workers.messages`): its id, on BROKER."""
    return json.dumps({"queue": BROKER, "message": call_id})


def on_broker(client: redis.Redis) -> list[str]:
    return [raw.decode() for raw in reversed(client.lrange(BROKER, 0, -1))]


def in_line(
    redis_client: redis.Redis,
    store: CallStore,
    queues: FairQueues,
    call_id: str,
    agent: str,
    check: Step | None = None,
) -> Queued:
    """Queue a new call of `agent` on QUEUE, as the lifecycle does."""
    place = queues.add_step(call_id, QUEUE, Priority.INTERACTIVE, agent, delivery(call_id))
    return Queueing(redis_client).queue(check, new_call(store, call_id, agent), place)


def test_a_call_over_its_quota_writes_nothing(
    redis_client: redis.Redis, store: CallStore, queues: FairQueues
) -> None:
    quotas = QuotaGate(redis_client, queue_bound=0)
    for number in range(2):
        check = quotas.check_step("a", ONE_WAITING, QUEUE)
        outcome = in_line(redis_client, store, queues, f"a-{number}", "a", check)

    assert outcome.refused is not None
    assert not outcome.created
    refusal = refusal_of(outcome.refused, "a", ONE_WAITING, QUEUE)
    assert isinstance(refusal, QuotaExceeded)
    assert refusal.quota == "max_queued"
    assert store.get("a-0") is not None  # no worker: it waits
    assert store.get("a-1") is None
    assert queues.of_agent("a").queued == 1


def test_a_taken_id_takes_no_place_in_line(
    redis_client: redis.Redis, store: CallStore, queues: FairQueues
) -> None:
    assert in_line(redis_client, store, queues, "c-1", "c").created

    again = in_line(redis_client, store, queues, "c-1", "c")

    assert (again.created, again.refused) == (False, None)
    assert queues.of_agent("c").queued == 1


def test_a_call_is_handed_out_when_a_worker_has_room(
    redis_client: redis.Redis, store: CallStore, queues: FairQueues
) -> None:
    Presence(redis_client, "w", ttl_s=30, machine_key=None, queue=QUEUE, slots=1).renew()
    handed = []
    for call_id in ("d-1", "d-2"):
        handed += in_line(redis_client, store, queues, call_id, "d").handed_out

    assert handed == ["d-1"]
    assert on_broker(redis_client) == ["d-1"]  # in the same script
    assert queues.of_agent("d").queued == 1


def test_a_machines_call_is_counted_open_and_put_on_the_broker_at_once(
    redis_client: redis.Redis, store: CallStore, queues: FairQueues
) -> None:
    create = new_call(store, "e-1", "e")

    place = queues.open_step("e-1", "e", delivery("e-1"))
    outcome = Queueing(redis_client).queue(None, create, place)

    assert outcome.created
    assert outcome.handed_out == ["e-1"]
    assert on_broker(redis_client) == ["e-1"]
    assert queues.of_agent("e").in_flight == 1
    assert redis_client.sismember(keys.AGENTS_OPEN, "e")


def test_steps_out_of_place_are_refused_before_anything_is_written(
    redis_client: redis.Redis, store: CallStore, queues: FairQueues
) -> None:
    """A pump that does not add the call would record it with no place in line."""
    queueing = Queueing(redis_client)
    create = new_call(store, "f-1", "f")
    add = queues.add_step("f-1", QUEUE, Priority.INTERACTIVE, "f", delivery("f-1"))
    with pytest.raises(ValueError, match="placed by a pump that adds it"):
        queueing.queue(None, create, create)
    with pytest.raises(ValueError, match="placed by a pump that adds it"):
        queueing.queue(None, create, queues.pump_step(QUEUE))
    with pytest.raises(ValueError, match="expected a check_quota step"):
        queueing.queue(create, create, add)
    with pytest.raises(ValueError, match="expected a create step"):
        queueing.queue(None, add, add)
    assert store.get("f-1") is None
    assert on_broker(redis_client) == []

"""Fair dispatch on a real Redis: agents served in turn, newcomers promptly but never
starving the others, batch work after interactive calls but never starved, no more calls
handed out than the live workers have slots (plus `ahead`), slots freed by endings,
calls that end while they wait taken out of their agent's list at once, and calls that
end after they were handed out leaving that list alone."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

import pytest
import redis

from toolrun.calls import keys
from toolrun.calls.envelope import Priority
from toolrun.calls.fairness import DEAD_WORKER_S, AgentUse, FairQueues
from toolrun.calls.store import CallStore
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.presence import Presence

QUEUE = "tools.read_only"
BROKER = "tests:broker"  # where the calls' deliveries put their messages here


@pytest.fixture
def store(redis_client: redis.Redis) -> CallStore:
    return CallStore(redis_client, ttl_s=600)


def fair(client: redis.Redis, *, ahead: int = 0, batch_every: int = 4) -> FairQueues:
    return FairQueues(client, ahead=ahead, batch_every=batch_every)


def workers(client: redis.Redis, *slots: int) -> list[Presence]:
    """Live workers of QUEUE with these pool sizes."""
    present = []
    for number, size in enumerate(slots):
        presence = Presence(
            client, f"w{number}", ttl_s=30, machine_key=None, queue=QUEUE, slots=size
        )
        presence.renew()
        present.append(presence)
    return present


def queued(
    store: CallStore, agent: str, number: int, priority: Priority = Priority.INTERACTIVE
) -> str:
    """A call of `agent` recorded as queued with its envelope (as the lifecycle does)."""
    call = ToolCall(id=f"{agent}-{number}", tool_name="read", version="1.0.0", agent_id=agent)
    result = ToolResult.accepted(call, ToolStatus.QUEUED)
    envelope = json.dumps(
        {"call": {"id": call.id, "agent_id": agent}, "queue": QUEUE, "priority": priority}
    )
    assert store.create(result, request="r", envelope=envelope)
    return call.id


def add(
    queues: FairQueues,
    store: CallStore,
    agent: str,
    count: int,
    priority: Priority = Priority.INTERACTIVE,
) -> list[str]:
    """Queue `count` calls of `agent`; returns the ids of the calls handed out meanwhile."""
    taken = []
    for number in range(count):
        call_id = queued(store, agent, number, priority)
        taken += queues.add(call_id, QUEUE, priority, agent, delivery(call_id))
    return taken


def delivery(call_id: str) -> str:
    """A stand-in for a call's delivery (`workers.messages`): its id, on BROKER."""
    return json.dumps({"queue": BROKER, "message": call_id})


def on_broker(client: redis.Redis) -> list[str]:
    """The messages the deliveries put on BROKER, first first."""
    return [raw.decode() for raw in reversed(client.lrange(BROKER, 0, -1))]


def pumped(queues: FairQueues) -> list[str]:
    return queues.pump(QUEUE)


def end(
    store: CallStore, call_id: str, agent: str, status: ToolStatus = ToolStatus.SUCCESS
) -> None:
    result = ToolResult(call_id=call_id, tool_name="read", status=status)
    result.metadata["agent_id"] = agent
    assert store.finish(result).stored


def test_nothing_is_handed_out_while_no_worker_is_live(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client, ahead=2)
    assert add(queues, store, "a", 3) == []
    assert queues.waiting(QUEUE) == 3
    assert on_broker(redis_client) == []

    workers(redis_client, 2)

    assert pumped(queues) == ["a-0", "a-1", "a-2"]  # 2 slots and 2 ahead: room for all
    assert queues.waiting(QUEUE) == 0
    assert on_broker(redis_client) == ["a-0", "a-1", "a-2"]  # put there by the pump
    assert redis_client.hlen(keys.SENT_MESSAGES) == 0


def test_a_flooding_agent_waits_its_turn(redis_client: redis.Redis, store: CallStore) -> None:
    queues = fair(redis_client)
    workers(redis_client, 1, 1)  # two slots

    assert add(queues, store, "flood", 50) == ["flood-0", "flood-1"]
    assert add(queues, store, "quiet", 1) == []  # no room: it waits, but first in line
    assert queues.of_agent("flood").queued == 48
    assert queues.of_agent("quiet").queued == 1

    # The newcomer and the flood take turns: its call goes within two freed slots, ahead
    # of the 48 calls of the flood.
    end(store, "flood-0", "flood")
    end(store, "flood-1", "flood")
    assert sorted(pumped(queues)) == ["flood-2", "quiet-0"]
    assert queues.waiting(QUEUE) == 47


def test_agents_with_calls_waiting_are_served_in_turn(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    add(queues, store, "a", 3)
    add(queues, store, "b", 2)
    add(queues, store, "c", 1)

    workers(redis_client, 6)

    # Each joined with nothing waiting: the newcomers, first come first served, take
    # every other turn; those with more calls go round the ring, one call a turn.
    assert pumped(queues) == ["a-0", "b-0", "a-1", "c-0", "b-1", "a-2"]


def test_batch_work_goes_after_interactive_calls_but_is_not_starved(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client, batch_every=2)
    add(queues, store, "plan", 3, Priority.BATCH)
    add(queues, store, "chat", 6)

    workers(redis_client, 9)

    order = pumped(queues)
    assert order[:2] == ["chat-0", "chat-1"]  # interactive first...
    assert order[2] == "plan-0"  # ...but every third turn is batch work's
    assert order == [
        *("chat-0", "chat-1", "plan-0"),
        *("chat-2", "chat-3", "plan-1"),
        *("chat-4", "chat-5", "plan-2"),
    ]


def test_an_ending_frees_its_slot_and_its_agents_open_count(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    workers(redis_client, 1)
    assert add(queues, store, "a", 2) == ["a-0"]
    assert queues.of_agent("a").in_flight == 2
    assert pumped(queues) == []  # the one slot is taken

    end(store, "a-0", "a")

    assert queues.of_agent("a").in_flight == 1
    assert pumped(queues) == ["a-1"]


def test_a_call_that_ends_while_it_waits_leaves_its_agents_list_at_once(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    add(queues, store, "a", 2)
    assert queues.of_agent("a") == AgentUse(queued=2, in_flight=2)

    end(store, "a-0", "a", ToolStatus.CANCELLED)  # no worker is live: nothing pumps

    assert queues.of_agent("a") == AgentUse(queued=1, in_flight=1)
    assert queues.waiting(QUEUE) == 1
    end(store, "a-1", "a", ToolStatus.CANCELLED)
    assert queues.of_agent("a") == AgentUse(queued=0, in_flight=0)
    assert redis_client.hgetall(keys.FAIR_WAITING) == {}  # no count left at zero
    assert redis_client.smembers(keys.AGENTS_OPEN) == set()
    workers(redis_client, 4)
    assert pumped(queues) == []
    assert redis_client.hlen(keys.SENT_MESSAGES) == 0  # their deliveries went with them
    assert on_broker(redis_client) == []


def test_a_handed_out_call_whose_record_is_gone_frees_its_slot_after_a_while(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = FairQueues(redis_client, ahead=0, batch_every=4, recheck_s=0)
    workers(redis_client, 1)
    assert add(queues, store, "a", 2) == ["a-0"]
    redis_client.delete(keys.record("a-0"))  # expired, its ending never stored

    assert pumped(queues) == ["a-1"]


def test_workers_that_leave_take_their_slots_with_them(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    first, second = workers(redis_client, 1, 3)
    assert queues.slots(QUEUE) == 4
    second.stop()
    assert queues.slots(QUEUE) == 1
    first.stop()
    assert queues.slots(QUEUE) == 0
    assert add(queues, store, "a", 1) == []


def test_taking_a_call_notes_it_as_sent_for_the_reapers(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    add(queues, store, "a", 1)
    assert redis_client.zscore(keys.SENT, "a-0") is None  # waiting: nothing to resend

    workers(redis_client, 1)
    pumped(queues)

    assert redis_client.zscore(keys.SENT, "a-0") is not None


def test_a_newcomer_never_starves_the_agents_already_waiting(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    workers(redis_client, 1)
    assert add(queues, store, "flood", 10) == ["flood-0"]
    served: list[str] = []
    for turn in range(6):  # a new agent with one call arrives before every slot frees
        add(queues, store, f"new{turn}", 1)
        end(store, served[-1] if served else "flood-0", "x")
        served += pumped(queues)

    assert sum(call.startswith("flood") for call in served) >= 2  # every other turn
    assert sum(call.startswith("new") for call in served) >= 3


def test_a_worker_gone_long_ago_is_forgotten(redis_client: redis.Redis, store: CallStore) -> None:
    queues = fair(redis_client)
    redis_client.zadd(keys.fair_workers(QUEUE), {"ghost": 1.0})  # expired in 1970
    redis_client.hset(keys.FAIR_SLOTS, "ghost", 8)

    assert pumped(queues) == []

    assert redis_client.zscore(keys.fair_workers(QUEUE), "ghost") is None
    assert redis_client.hget(keys.FAIR_SLOTS, "ghost") is None
    assert DEAD_WORKER_S > 3 * 30  # far longer than a worker's TTL


def list_commands(client: redis.Redis, key: str, action: Callable[[], object]) -> list[str]:
    """The commands the scripts run on `key` while `action` runs (seen by MONITOR, which
    shows each command a script runs; other databases' traffic is left out)."""
    marker = f"done-{uuid.uuid4().hex}"
    database = client.connection_pool.connection_kwargs.get("db", 0)
    seen = []
    with client.monitor() as monitor:  # type: ignore[no-untyped-call]
        action()
        client.echo(marker)
        while marker not in (command := monitor.next_command())["command"]:
            if command["db"] == database and command["client_type"] == "lua":
                seen.append(command["command"])
    return [command for command in seen if key in command.split()]


def test_a_call_ending_after_it_was_handed_out_leaves_its_agents_list_alone(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    workers(redis_client, 1)
    assert add(queues, store, "a", 3) == ["a-0"]
    waiting = keys.fair_ring(QUEUE, Priority.INTERACTIVE) + ":agent:a"

    # Cancelled before a worker started it (its envelope still kept): nothing to take
    # out of the list, so the list, which may hold max_queued calls, is not scanned.
    touched = list_commands(
        redis_client, waiting, lambda: end(store, "a-0", "a", ToolStatus.CANCELLED)
    )

    assert touched == []
    assert redis_client.lrange(waiting, 0, -1) == [b"a-1", b"a-2"]
    assert queues.of_agent("a") == AgentUse(queued=2, in_flight=2)
    assert queues.waiting(QUEUE) == 2
    assert redis_client.zscore(keys.fair_sent(QUEUE), "a-0") is None  # its slot is free
    assert pumped(queues) == ["a-1"]
    assert queues.of_agent("a") == AgentUse(queued=1, in_flight=2)


def test_an_ending_hands_out_the_next_call_in_the_same_round_trip(
    redis_client: redis.Redis, store: CallStore
) -> None:
    queues = fair(redis_client)
    workers(redis_client, 1)
    assert add(queues, store, "a", 1) + add(queues, store, "b", 1) == ["a-0"]
    first = ToolResult(call_id="a-0", tool_name="read", status=ToolStatus.SUCCESS)
    first.metadata["agent_id"] = "a"

    finished = store.finish(first, pump=queues.pump_step(QUEUE))

    assert finished.stored
    assert finished.handed_out == ["b-0"]
    assert on_broker(redis_client) == ["a-0", "b-0"]  # b-0 put there by the ending
    assert pumped(queues) == []  # b-0 holds the one slot now
    again = store.finish(first, pump=queues.pump_step(QUEUE))
    assert (again.stored, again.handed_out) == (False, [])  # the first ending wins


def test_a_call_queued_without_its_delivery_is_left_to_the_reapers_at_once(
    redis_client: redis.Redis, store: CallStore
) -> None:
    """Queued by an older toolrun (no delivery kept with it): handed out all the same,
    and noted as sent long ago, so the reapers' next round sends it (`send_lost`)."""
    queues = fair(redis_client)
    add(queues, store, "a", 1)
    redis_client.hdel(keys.SENT_MESSAGES, "a-0")
    workers(redis_client, 1)

    assert pumped(queues) == ["a-0"]
    assert on_broker(redis_client) == []
    assert list(store.sent_before(time.time() - 3600)) == ["a-0"]


def test_the_calls_waiting_their_turn_are_told_apart(
    redis_client: redis.Redis, store: CallStore
) -> None:
    """What the scheduler asks at start, so as not to send again a node's call that only
    waits its turn."""
    queues = fair(redis_client)
    add(queues, store, "a", 2)

    assert store.waiting_their_turn(["a-0", "a-1", "other"]) == {"a-0", "a-1"}
    redis_client.hdel(keys.SENT_MESSAGES, "a-1")  # as if queued by an older toolrun
    assert store.waiting_their_turn(["a-1"]) == {"a-1"}  # waiting all the same
    workers(redis_client, 1)
    assert pumped(queues) == ["a-0"]
    assert store.waiting_their_turn(["a-0", "a-1"]) == {"a-1"}
    assert store.waiting_their_turn([]) == set()


def test_a_machines_call_placed_alone_is_on_the_broker_at_once(
    redis_client: redis.Redis, store: CallStore
) -> None:
    """An approved call for a machine's queue (`FairPublisher.send`): no turn to wait."""
    queues = fair(redis_client)
    placed = queues.place(queues.open_step("m-0", "m", delivery("m-0")))

    assert placed == ["m-0"]
    assert on_broker(redis_client) == ["m-0"]
    assert queues.of_agent("m") == AgentUse(queued=0, in_flight=1)
    with pytest.raises(ValueError, match="placed by add or open"):
        queues.place(queues.pump_step(QUEUE))

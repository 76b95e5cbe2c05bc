"""A reaper sends again a queued call whose message the broker lost, and only that one
(real Redis, the real Celery app; no worker takes anything)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from tests.envelopes import envelope

from toolrun.calls import keys
from toolrun.calls.fairness import FairQueues
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import fair_publisher, platform_endings
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.app import create_celery_app
from toolrun.workers.broker import held_task_ids
from toolrun.workers.reaper import Reaper, _Taken


def queued_long_ago(store: CallStore, call: ToolCall, *, handed_out: bool = True) -> None:
    """Recorded as queued, with its envelope, an hour ago (as `Lifecycle.send` does), and
    taken from its agent's list for the workers then (`handed_out`: as the fair queues'
    pump does), or never put in it (its sender died in between)."""
    sent = envelope(call, level=PermissionLevel.READ_ONLY)
    queued = ToolResult.accepted(call, ToolStatus.QUEUED)
    queued.metadata["queued_at"] -= 3600
    assert store.create(queued, request=call.digest(), envelope=sent.model_dump_json())
    if handed_out:
        store.client.zadd(keys.fair_sent(sent.queue), {call.id: queued.metadata["queued_at"]})


@pytest.fixture
def store(redis_client: redis.Redis) -> CallStore:
    return CallStore(redis_client, ttl_s=600)


@pytest.fixture
def reaper(redis_url: str, store: CallStore, tmp_path: Path) -> Iterator[Reaper]:
    """A reaper (TTL 3 s) with the real Celery app; no worker takes anything."""
    settings = Settings(redis_url=redis_url, home=tmp_path / "home", worker_ttl_s=3)
    celery = create_celery_app(settings)
    endings = platform_endings(settings, store, history=None)
    publisher = fair_publisher(settings, store.client, celery)
    try:
        yield Reaper(settings, endings, celery, "me", publisher)
    finally:
        celery.close()


def test_a_lost_message_is_sent_again_and_a_held_one_is_not(
    reaper: Reaper, store: CallStore, redis_client: redis.Redis
) -> None:
    lost = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "a"})
    queued_long_ago(store, lost)
    waiting = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "b"})
    queued_long_ago(store, waiting)
    reaper.celery.send_task(
        "toolrun.execute", args=[{}], task_id=waiting.id, queue="tools.read_only"
    )
    queues = {PermissionLevel.READ_ONLY.queue_name}
    assert held_task_ids(redis_client, queues) == {waiting.id}

    assert reaper.send_lost() == [lost.id]

    assert held_task_ids(redis_client, queues) == {waiting.id, lost.id}
    redis_client.delete(*queues)  # both messages lost now
    assert reaper.send_lost() == [waiting.id]  # not the one sent again just now


def test_a_call_handed_out_without_its_message_is_sent_at_the_next_round(
    reaper: Reaper, store: CallStore, redis_client: redis.Redis
) -> None:
    """Queued by an older toolrun, which kept no message with it: the pump hands it out
    and notes it as sent long ago (`calls.fairness`), so the next round sends it, once."""
    older = ToolCall(tool_name="read", version="1.0.0", agent_id="bot")
    queued_long_ago(store, older)
    redis_client.zadd(keys.SENT, {older.id: 0})  # as the pump notes it
    queues = {PermissionLevel.READ_ONLY.queue_name}

    assert reaper.send_lost() == [older.id]

    assert held_task_ids(redis_client, queues) == {older.id}
    redis_client.delete(*queues)
    assert reaper.send_lost() == []  # noted as sent now, not long ago


def test_a_call_recorded_but_never_put_in_its_agents_list_is_put_there(
    reaper: Reaper, store: CallStore, redis_client: redis.Redis
) -> None:
    stranded = ToolCall(tool_name="read", version="1.0.0", agent_id="bot")
    queued_long_ago(store, stranded, handed_out=False)

    assert reaper.send_lost() == [stranded.id]

    queues = {PermissionLevel.READ_ONLY.queue_name}
    assert held_task_ids(redis_client, queues) == set()  # no worker: it waits its turn
    assert FairQueues(redis_client, ahead=0, batch_every=4).of_agent("bot").queued == 1
    assert reaper.send_lost() == []  # waiting its turn is not lost


@pytest.mark.parametrize(
    ("holder", "held_ttls", "action"),
    [
        ("w-alive", 5.0, None),  # a live worker took it: its call starts in its turn
        ("w-lost", 0.5, "requeue"),  # its worker is gone: back to its queue at once
        (None, 1.5, None),  # taken by no noted worker: not yet
        (None, 2.5, "requeue"),  # ... and past twice the TTL
    ],
)
def test_a_queued_calls_message_goes_back_only_when_its_holder_is_lost(
    holder: str | None, held_ttls: float, action: str | None
) -> None:
    queued = ToolResult(call_id="c1", tool_name="read", status=ToolStatus.QUEUED)
    taken = _Taken("tag", "c1", None, 0.0, holder)

    assert Reaper._action(queued, {"w-alive"}, taken, held_ttls) == action

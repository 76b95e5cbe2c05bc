"""The call store against real Redis: a finished call is never started again."""

from __future__ import annotations

import uuid

import pytest
import redis

from toolrun.calls import store as store_module
from toolrun.calls.store import CallStore
from toolrun.tools.model import ToolResult, ToolStatus


def state(call_id: str, status: ToolStatus) -> ToolResult:
    return ToolResult(call_id=call_id, tool_name="read", status=status)


def test_deliveries_are_counted_and_a_finished_call_is_not_restarted(
    redis_client: redis.Redis,
) -> None:
    store = CallStore(redis_client, ttl_s=60)
    call_id = uuid.uuid4().hex

    assert store.send_start(state(call_id, ToolStatus.RUNNING)).deliveries() == 1
    assert store.send_start(state(call_id, ToolStatus.RUNNING)).deliveries() == 2  # a redelivery
    store.finish(state(call_id, ToolStatus.SUCCESS))

    assert (
        store.send_start(state(call_id, ToolStatus.RUNNING)).deliveries() == 0
    )  # redelivered after the end
    record = ToolResult.model_validate_json(redis_client.get(f"toolrun:call:{call_id}") or b"")
    assert record.status is ToolStatus.SUCCESS
    assert 0 < redis_client.ttl(f"toolrun:call:{call_id}") <= 60


def test_dead_letters_keep_only_the_newest(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "_DEAD_LETTERS_KEPT", 3)
    store = CallStore(redis_client, ttl_s=60)
    redis_client.delete("toolrun:dead_letters")

    for call_id in ["a", "b", "c", "d", "e"]:
        store.dead_letter(call_id)

    assert redis_client.lrange("toolrun:dead_letters", 0, -1) == [b"c", b"d", b"e"]

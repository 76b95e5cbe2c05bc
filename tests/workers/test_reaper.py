"""A reaper sends again a queued call whose message the broker lost, and only that one
(real Redis, the real Celery app; no worker takes anything)."""

from __future__ import annotations

from pathlib import Path

import redis
from tests.envelopes import envelope

from toolrun.calls import keys
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import fair_publisher, platform_endings
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.app import create_celery_app
from toolrun.workers.broker import held_task_ids
from toolrun.workers.reaper import Reaper


def queued_long_ago(store: CallStore, call: ToolCall) -> None:
    """Recorded as queued, with its envelope, and taken for the broker an hour ago (as
    `Lifecycle.send` and the fair queues' pump do)."""
    sent = envelope(call, level=PermissionLevel.READ_ONLY)
    queued = ToolResult.accepted(call, ToolStatus.QUEUED)
    queued.metadata["queued_at"] -= 3600
    assert store.create(queued, request=call.digest(), envelope=sent.model_dump_json())
    store.client.zadd(keys.SENT, {call.id: queued.metadata["queued_at"]})


def test_a_lost_message_is_sent_again_and_a_held_one_is_not(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    settings = Settings(redis_url=redis_url, home=tmp_path / "home", worker_ttl_s=3)
    store = CallStore(redis_client, ttl_s=600)
    celery = create_celery_app(settings)
    endings = platform_endings(settings, store, history=None)
    reaper = Reaper(settings, endings, celery, "me", fair_publisher(settings, redis_client, celery))
    lost = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "a"})
    queued_long_ago(store, lost)
    waiting = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "b"})
    queued_long_ago(store, waiting)
    celery.send_task("toolrun.execute", args=[{}], task_id=waiting.id, queue="tools.read_only")
    queues = {PermissionLevel.READ_ONLY.queue_name}
    try:
        assert held_task_ids(redis_client, queues) == {waiting.id}

        assert reaper.send_lost() == [lost.id]

        assert held_task_ids(redis_client, queues) == {waiting.id, lost.id}
        assert reaper.send_lost() == []  # sent again just now: not again at once
    finally:
        celery.close()

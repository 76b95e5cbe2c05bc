"""The series the alerts need beside the call counters, from a real Redis: each level's
workers (alive, their pool processes, lost without signing off) and its queue wait."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.integration.platform import other_database, wait_for
from tests.monitoring.conftest import snapshot
from toolrun.calls.endings import CallEnded
from toolrun.calls.store import add_increments
from toolrun.monitoring import CallMonitor
from toolrun.monitoring.snapshot import Workers
from toolrun.permissions.levels import DELEGATION_QUEUE, PermissionLevel
from toolrun.tools.model import ToolResult, ToolStatus
from toolrun.workers.presence import Presence

OWN_DATABASE = 8  # other_database offset: the session's platform never sees these workers


@pytest.fixture
def own_redis(redis_url: str) -> Iterator[tuple[redis.Redis, str]]:
    url = other_database(redis_url, OWN_DATABASE)
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield client, url
    client.flushdb()
    client.close()


def presence(client: redis.Redis, name: str, queue: str, slots: int) -> Presence:
    return Presence(client, name, ttl_s=0.5, machine_key=None, queue=queue, slots=slots)


def test_workers_alive_their_slots_and_the_lost_ones_by_level(
    own_redis: tuple[redis.Redis, str],
) -> None:
    client, url = own_redis
    queue = PermissionLevel.EXECUTE.queue_name
    running = presence(client, "execute@a/1", queue, slots=4)
    running.start()
    stopped = presence(client, "execute@a/2", queue, slots=2)
    stopped.start()
    stopped.stop()  # a clean stop: not lost
    presence(client, "execute@a/3", queue, slots=2).renew()  # then killed: never renewed
    presence(client, "delegation@a/4", DELEGATION_QUEUE, slots=2).start()
    try:
        wait_for(
            lambda: snapshot(url).workers["execute"] == Workers(alive=1, slots=4, lost=1),
            10,
            "the killed worker's presence to run out",
        )
        workers = snapshot(url).workers
        assert workers["delegation"] == Workers(alive=1, slots=2, lost=0)
        assert workers["read_only"] == Workers()
    finally:
        running.stop()


def test_a_worker_s_call_adds_its_queue_wait_to_its_level(
    own_redis: tuple[redis.Redis, str],
) -> None:
    client, url = own_redis
    monitor = CallMonitor(slow_call_ms=60_000)

    def ended(status: ToolStatus, **metadata: object) -> None:
        result = ToolResult(call_id="c", tool_name="bash", status=status, metadata=metadata)
        add_increments(client, monitor.count(CallEnded(result, {}, None)))

    ended(ToolStatus.SUCCESS, worker="execute@a", queue_wait_ms=1500, execution_time_ms=3)
    ended(ToolStatus.BLOCKED, worker="execute@a", queue_wait_ms=20)  # refused by the worker
    ended(ToolStatus.BLOCKED, execution_time_ms=None)  # by the API: never queued

    waits = snapshot(url).queue_waits
    assert set(waits) == {"execute"}
    assert waits["execute"].count == 2
    assert waits["execute"].buckets["2.5"] == 1
    assert waits["execute"].buckets["0.025"] == 1
    assert waits["execute"].sum == pytest.approx(1.52)

"""A worker lost whole (its main process and pool killed, as when its machine dies): its
calls are settled by another worker's reaper within about twice the worker TTL, not after
the broker's visibility timeout (an hour) — a tool safe to run twice runs again, any other
ends as an error that says so; each call ends once, with one history row."""

from __future__ import annotations

import base64
import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from redis.client import PubSub
from sqlmodel import Session, col, select

from tests.integration.platform import Platform, apart, wait_for
from toolrun.calls import keys
from toolrun.database import open_database
from toolrun.history import CallRecord
from toolrun.permissions.levels import PermissionLevel
from toolrun.workers.wire import events_channel

TTL_S = 3  # the platform's worker TTL here (30 s by default): the reaper sweeps every 1 s


@pytest.fixture
def lonely(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """An API and no worker yet, on a Redis database of its own."""
    root = tmp_path_factory.mktemp("lost")
    env = {"TOOLRUN_WORKER_TTL_S": str(TTL_S)}
    with apart(redis_url, 4, root, levels=(), extra_env=env) as started:
        yield started


def submit(api: httpx.Client, tool: str, **arguments: Any) -> str:
    response = api.post("/v1/calls", json={"tool_name": tool, "arguments": arguments})
    assert response.status_code == 202, response.text
    call_id: str = response.json()["call_id"]
    return call_id


def final(api: httpx.Client, call_id: str, timeout_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result: dict[str, Any] = api.get(f"/v1/calls/{call_id}").json()
        if result["status"] not in ("queued", "running"):
            return result
        time.sleep(0.1)
    raise AssertionError(f"call {call_id} still {result['status']} after {timeout_s} s")


def task_event(listener: PubSub, call_id: str, kind: str, timeout_s: float = 10) -> dict[str, Any]:
    """The first task event of `kind` for `call_id` that `listener` hears."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        published = listener.get_message(timeout=0.5)
        if published is None:
            continue
        event = json.loads(base64.b64decode(json.loads(published["data"])["body"]))
        if (event["type"], event.get("uuid")) == (kind, call_id):
            listener.close()
            return dict(event)
    listener.close()
    raise AssertionError(f"no {kind} for {call_id} in {timeout_s} s")


def history_count(platform: Platform, call_id: str) -> int:
    engine = open_database(platform.settings.database)
    try:
        with Session(engine) as session:
            query = select(CallRecord).where(col(CallRecord.call_id) == call_id)
            return len(session.exec(query).all())
    finally:
        engine.dispose()


def test_the_calls_of_a_worker_lost_whole_are_settled_by_another(lonely: Platform) -> None:
    lonely.start_process("worker-doomed", "worker", "--level=read_only", "--concurrency=2")
    wait_for(lambda: lonely.worker_ready("doomed"), 60, "the doomed worker")
    workspace = lonely.workspace
    tag = uuid.uuid4().hex[:8]
    with httpx.Client(base_url=lonely.base_url, headers=lonely.headers, timeout=30) as api:
        unsafe = submit(api, "sleepy_once", seconds=1.5, pid_file=f"once-{tag}")
        safe = submit(api, "sleepy", seconds=1.5, pid_file=f"again-{tag}")
        for name in (f"once-{tag}", f"again-{tag}"):
            wait_for(lambda n=name: (workspace / n).read_text().strip(), 20, f"{name} to start")
        doomed = lonely.processes.pop("worker-doomed")
        flower = redis.Redis.from_url(lonely.redis_url).pubsub(ignore_subscribe_messages=True)
        flower.psubscribe(events_channel(lonely.redis_url, "*"))  # the task events

        os.killpg(doomed.pid, signal.SIGKILL)  # the main process and its pool, at once
        doomed.wait()
        lonely.start_worker(PermissionLevel.READ_ONLY)  # another worker, which reaps

        ended_unsafe = final(api, unsafe)
        ended_safe = final(api, safe)

    assert ended_unsafe["status"] == "error", ended_unsafe
    assert ended_unsafe["error"] == (
        "worker lost after the tool started (1 time); its effects are unknown, and "
        "sleepy_once@1.0.0 is not safe to run twice: not run again"
    )
    assert ended_unsafe["metadata"]["tool_starts"] == 1
    assert len((workspace / f"once-{tag}").read_text().split()) == 1  # never run again
    assert ended_safe["status"] == "success", ended_safe
    assert (ended_safe["metadata"]["deliveries"], ended_safe["metadata"]["tool_starts"]) == (2, 2)
    assert len((workspace / f"again-{tag}").read_text().split()) == 2
    client = redis.Redis.from_url(lonely.redis_url)
    for call_id in (unsafe, safe):  # each ended once (one result handed out), with its row
        assert client.llen(keys.done(call_id)) == 1
        wait_for(lambda c=call_id: history_count(lonely, c) == 1, 15, "the history rows")
    assert not client.hlen("unacked")  # nothing left behind
    # The reaper tells Flower how the call it ended did end (its message is dropped).
    failed = task_event(flower, unsafe, "task-failed")
    assert "not safe to run twice" in failed["exception"]


def test_a_live_workers_running_calls_are_left_alone(lonely: Platform) -> None:
    """A reaper does not touch what a live worker runs, however long it runs (here longer
    than the worker TTL)."""
    lonely.start_worker(PermissionLevel.READ_ONLY)
    wait_for(lambda: lonely.worker_ready("read_only"), 60, "the worker")
    with httpx.Client(base_url=lonely.base_url, headers=lonely.headers, timeout=30) as api:
        call_id = submit(api, "sleepy_once", seconds=2 * TTL_S)

        result = final(api, call_id)

    assert result["status"] == "success", result
    assert (result["metadata"]["deliveries"], result["metadata"]["tool_starts"]) == (1, 1)

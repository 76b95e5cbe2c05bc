"""What the execute task returns, which Flower shows in its result column: the call's
status, never its output (real Redis, the real Celery app, the task run in-process)."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery
from celery.result import EagerResult
from tests.envelopes import envelope

from toolrun.calls.envelope import Envelope
from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.app import create_celery_app
from toolrun.workers.messages import EXECUTE_TASK
from toolrun.workers.runtime import WorkerRuntime
from toolrun.workers.task_events import ToolCallFailed
from toolrun.workers.tasks import REDELIVERY_IGNORED, UNREAD, register_tasks
from toolrun.workers.wire import events_channel


@pytest.fixture
def celery(redis_url: str, workspace: Path, tmp_path: Path) -> Iterator[Celery]:
    settings = Settings(
        redis_url=redis_url, workspace=workspace, home=tmp_path / "home", network_isolation="off"
    )
    app = create_celery_app(settings)
    register_tasks(
        app, WorkerRuntime(settings, PermissionLevel.READ_ONLY, ToolRegistry.with_builtins())
    )
    try:
        yield app
    finally:
        app.close()


def read(file_path: str) -> dict[str, object]:
    call = ToolCall(tool_name="read", arguments={"file_path": file_path})
    return envelope(call).model_dump(mode="json")


def test_a_successful_call_returns_its_status_and_not_its_output(
    celery: Celery, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("a secret line\n")

    outcome = celery.tasks[EXECUTE_TASK].apply(args=(read("notes.txt"),))

    assert outcome.successful(), outcome.traceback
    assert outcome.result == "success"


def test_a_failed_call_raises_with_its_status_first(celery: Celery) -> None:
    outcome = celery.tasks[EXECUTE_TASK].apply(args=(read("missing.txt"),))

    assert outcome.failed()
    assert isinstance(outcome.result, ToolCallFailed)
    assert str(outcome.result).startswith("error: ")


def test_a_redelivery_of_an_ended_call_says_so(celery: Celery, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("x\n")
    payload = read("notes.txt")
    assert celery.tasks[EXECUTE_TASK].apply(args=(payload,)).result == "success"

    assert celery.tasks[EXECUTE_TASK].apply(args=(payload,)).result == REDELIVERY_IGNORED


def test_an_unreadable_message_says_nothing_ran(celery: Celery) -> None:
    outcome = celery.tasks[EXECUTE_TASK].apply(args=({"not": "an envelope"},))

    assert outcome.successful(), outcome.traceback
    assert outcome.result == UNREAD


FINAL = {"task-succeeded", "task-failed", "task-revoked"}


def task_events(
    celery: Celery, redis_client: redis.Redis, payload: dict[str, object]
) -> tuple[EagerResult, list[dict[str, Any]]]:
    """The execute task's outcome on `payload`, and the task events it published (up to
    its final one)."""
    listener = redis_client.pubsub(ignore_subscribe_messages=True)
    listener.psubscribe(events_channel(str(celery.conf.broker_url), "*"))
    outcome = celery.tasks[EXECUTE_TASK].apply(args=(payload,))
    sent: list[dict[str, Any]] = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not sent or sent[-1]["type"] not in FINAL):
        published = listener.get_message(timeout=0.5)  # None too for its subscription
        if published is not None:
            message = json.loads(published["data"])
            sent.append(json.loads(base64.b64decode(message["body"])))
    while (published := listener.get_message(timeout=0.2)) is not None:  # anything after
        sent.append(json.loads(base64.b64decode(json.loads(published["data"])["body"])))
    listener.close()
    return outcome, sent


@pytest.mark.parametrize(
    ("owner", "method"),
    [(WorkerRuntime, "_execute"), (WorkerRuntime, "_checked"), (CallStore, "send_start")],
    ids=["after the start script", "while it runs", "before it"],
)
def test_a_task_that_raises_tells_flower_it_was_received_started_and_failed(
    celery: Celery,
    redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    owner: type,
    method: str,
) -> None:
    """Celery's own task events are off (`workers.task_events`): an error out of the run
    itself still reaches Flower as task-failed, after task-received and task-started,
    which a task that raised before the start script published sends with it."""

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("the history database is away")

    monkeypatch.setattr(owner, method, broken)
    outcome, sent = task_events(celery, redis_client, read("notes.txt"))

    assert outcome.failed()
    assert [event["type"] for event in sent] == ["task-received", "task-started", "task-failed"]
    assert sent[-1]["exception"] == "RuntimeError('the history database is away')"
    assert "Traceback" in sent[-1]["traceback"]


def test_a_redelivery_of_an_ended_call_tells_flower_only_how_it_ended(
    celery: Celery, redis_client: redis.Redis, workspace: Path
) -> None:
    """A message taken again after its call ended (its worker was lost before the
    acknowledgement) starts nothing: Flower hears the call's ending again, not a task
    received, started and succeeded with 'redelivery ignored'."""
    (workspace / "notes.txt").write_text("x\n")
    payload = read("notes.txt")
    _first, first = task_events(celery, redis_client, payload)
    assert [event["type"] for event in first][-1] == "task-succeeded"

    outcome, again = task_events(celery, redis_client, payload)

    assert outcome.result == REDELIVERY_IGNORED
    assert [event["type"] for event in again] == ["task-succeeded"]
    assert again[0]["result"] == first[-1]["result"] == "'success'"


def test_the_message_of_a_call_cancelled_while_queued_is_revoked_for_flower(
    celery: Celery, redis_client: redis.Redis
) -> None:
    payload = read("notes.txt")
    call = Envelope.model_validate(payload).call
    store = CallStore(redis_client, ttl_s=60)
    assert store.create(ToolResult.accepted(call, ToolStatus.CANCELLED), request=call.digest())

    outcome, sent = task_events(celery, redis_client, payload)

    assert outcome.result == REDELIVERY_IGNORED
    assert [event["type"] for event in sent] == ["task-revoked"]
    assert sent[0]["uuid"] == outcome.id
    assert (sent[0]["terminated"], sent[0]["expired"]) == (False, False)

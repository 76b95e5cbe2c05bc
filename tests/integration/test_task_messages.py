"""What a published call looks like on the broker: the raw kombu message in Redis.

Flower shows a task's `argsrepr`/`kwargsrepr` headers (the task-sent and task-received
events carry them); the body keeps the real arguments for the worker.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu.exceptions import BatchPublishError
from kombu.transport.redis import PublishBatch

from tests.envelopes import envelope
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall
from toolrun.workers.app import create_celery_app
from toolrun.workers.dispatch import MAX_REPR_CHARS, enqueue

HIDDEN = "s3cret-value"
SECRET_SCHEMA = {
    "type": "object",
    "properties": {"url": {"type": "string"}, "token": {"type": "string", "writeOnly": True}},
}


@pytest.fixture
def idle_url(redis_url: str) -> Iterator[str]:
    """A database no worker consumes: messages stay in their queue's list."""
    url = redis_url.rsplit("/", 1)[0] + "/11"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


def published(url: str, call: ToolCall, parameters: dict[str, Any] | None) -> dict[str, Any]:
    """Enqueue `call` on the read_write queue and return the raw message found there."""
    app = create_celery_app(Settings(redis_url=url))
    try:
        enqueue(
            app,
            envelope(
                call,
                queue=PermissionLevel.READ_WRITE.queue_name,
                approved_by="rule r1",
                time_limit_s=5,
            ),
            parameters=parameters,
            kill_grace_s=0.5,
        )
    finally:
        app.close()
    client = redis.Redis.from_url(url)
    try:
        [raw] = client.lrange(PermissionLevel.READ_WRITE.queue_name, 0, -1)
    finally:
        client.close()
    message: dict[str, Any] = json.loads(raw)
    return message


def test_headers_show_the_arguments_as_json_with_secrets_redacted(idle_url: str) -> None:
    call = ToolCall(
        tool_name="http_fetch",
        version="1.0.0",
        arguments={"url": "https://example.com/x", "token": HIDDEN},
        agent_id="agent-1",
    )

    message = published(idle_url, call, SECRET_SCHEMA)

    headers = message["headers"]
    assert headers["shadow"] == "toolrun.http_fetch"
    assert json.loads(headers["argsrepr"]) == {"url": "https://example.com/x", "token": "***"}
    assert json.loads(headers["kwargsrepr"]) == {
        "version": "1.0.0",
        "agent_id": "agent-1",
        "approved_by": "rule r1",
    }
    assert HIDDEN not in json.dumps(headers)
    body = json.loads(base64.b64decode(message["body"]))
    args, _kwargs, _embed = body
    assert args[0]["arguments"]["token"] == HIDDEN  # the worker still gets it


def test_long_arguments_are_cut_to_a_readable_length(idle_url: str) -> None:
    call = ToolCall(tool_name="write", arguments={"file_path": "a.txt", "content": "x" * 50_000})

    headers = published(idle_url, call, None)["headers"]

    assert len(headers["argsrepr"]) == MAX_REPR_CHARS
    assert headers["argsrepr"].startswith('{"file_path": "a.txt", "content": "xxx')
    assert headers["argsrepr"].endswith("…")


def next_message(listener: Any, timeout_s: float) -> dict[str, Any] | None:
    """The next message published to `listener` (subscription replies skipped)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message: dict[str, Any] | None = listener.get_message(timeout=0.5)
        if message is not None:
            return message
    return None


def test_the_message_and_its_task_sent_event_are_published_together(idle_url: str) -> None:
    """One pipeline carries both: the message in its queue's list, and the task-sent event
    Flower reads, on the events' channel."""
    client = redis.Redis.from_url(idle_url)
    listener = client.pubsub(ignore_subscribe_messages=True)
    listener.psubscribe("*celeryev/task.sent")
    try:
        call = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "a.txt"})
        headers = published(idle_url, call, None)["headers"]
        event = next_message(listener, timeout_s=5)
    finally:
        listener.close()
        client.close()

    assert event is not None
    assert json.loads(base64.b64decode(json.loads(event["data"])["body"]))["uuid"] == headers["id"]


def test_a_failed_pipeline_is_sent_again_the_usual_way(
    idle_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kombu cannot say whether a failed pipeline reached Redis; the call is sent again,
    through Celery's own (retried) publish, rather than lost."""
    failures = []

    def fail(batch: PublishBatch) -> None:
        failures.append(batch)
        batch.discard()
        raise BatchPublishError("Redis publish batch failed; delivery is uncertain")

    monkeypatch.setattr(PublishBatch, "flush", fail)
    call = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "a.txt"})

    headers = published(idle_url, call, None)["headers"]

    assert len(failures) == 1
    assert headers["id"] == call.id

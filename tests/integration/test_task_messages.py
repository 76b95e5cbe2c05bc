"""What a call looks like on the broker: the raw kombu message in Redis.

Flower shows a task's `argsrepr`/`kwargsrepr` headers (the task-sent and task-received
events carry them); the body keeps the real arguments for the worker. toolrun builds the
message and its event itself (`workers.messages`), so they are compared here with what
Celery's own `send_task` writes for the same call.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.envelopes import envelope, put_on_broker
from toolrun.calls import keys
from toolrun.calls.envelope import Envelope
from toolrun.calls.fairness import FairQueues
from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.app import create_celery_app
from toolrun.workers.dispatch import MAX_REPR_CHARS, FairPublisher, task_options
from toolrun.workers.messages import EXECUTE_TASK, Messages
from toolrun.workers.presence import Presence
from toolrun.workers.wire import events_channel

HIDDEN = "s3cret-value"
SECRET_SCHEMA = {
    "type": "object",
    "properties": {"url": {"type": "string"}, "token": {"type": "string", "writeOnly": True}},
}
READ_WRITE = PermissionLevel.READ_WRITE.queue_name


@pytest.fixture
def idle_url(redis_url: str) -> Iterator[str]:
    """A database no worker consumes: messages stay in their queue's list."""
    url = redis_url.rsplit("/", 1)[0] + "/11"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


def admitted(call: ToolCall) -> Envelope:
    return envelope(call, queue=READ_WRITE, approved_by="rule r1", time_limit_s=5)


def only_message(url: str) -> dict[str, Any]:
    """The one message on the read_write queue, taken off it."""
    client = redis.Redis.from_url(url)
    try:
        [raw] = client.lrange(READ_WRITE, 0, -1)
        client.delete(READ_WRITE)
    finally:
        client.close()
    message: dict[str, Any] = json.loads(raw)
    return message


def published(url: str, call: ToolCall, parameters: dict[str, Any] | None) -> dict[str, Any]:
    """Put `call` on the read_write queue and return the raw message found there."""
    put_on_broker(url, admitted(call), parameters)
    return only_message(url)


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


def sent_event(listener: Any) -> dict[str, Any]:
    """The next task-sent event on `listener`: its channel, its message and its body."""
    event = next_message(listener, timeout_s=5)
    assert event is not None, "no task-sent event"
    message = json.loads(event["data"])
    body = json.loads(base64.b64decode(message["body"]))
    return {"channel": event["channel"].decode(), "message": message, "body": body}


def without(found: dict[str, Any], *paths: str) -> dict[str, Any]:
    """`found` (a copy) without the values at these dotted paths."""
    copy = json.loads(json.dumps(found))
    for path in paths:
        *parents, last = path.split(".")
        inner = copy
        for parent in parents:
            inner = inner[parent]
        inner.pop(last)
    return copy


@pytest.mark.parametrize("way", ["handed out by the pump", "sent again"])
def test_the_message_and_its_event_are_those_celery_would_send(idle_url: str, way: str) -> None:
    """Field for field, but for what differs from one send to the next: the delivery
    tag, the clock, the time, and the sending app's reply address; whether the Lua
    script that hands the call out pushes them or the reapers send them again."""
    call = ToolCall(
        tool_name="http_fetch",
        version="1.0.0",
        arguments={"url": "https://example.com/x", "token": HIDDEN},
        agent_id="agent-1",
    )
    sent = admitted(call).model_copy(update={"secrets": ["token"]})
    options = task_options(sent, sent.redaction(), 0.5)
    client = redis.Redis.from_url(idle_url)
    listener = client.pubsub(ignore_subscribe_messages=True)
    listener.subscribe(events_channel(idle_url, "task.sent"))
    app = create_celery_app(Settings(redis_url=idle_url))
    publisher = FairPublisher(Messages(app), FairQueues(client, ahead=0, batch_every=4), 0.5)
    try:
        app.send_task(
            EXECUTE_TASK,
            args=[sent.model_dump(mode="json")],
            task_id=call.id,
            queue=READ_WRITE,
            soft_time_limit=options.soft_time_limit,
            time_limit=options.time_limit,
            shadow=options.shadow,
            argsrepr=options.argsrepr,
            kwargsrepr=options.kwargsrepr,
        )
        celerys = only_message(idle_url), sent_event(listener)
        if way == "sent again":
            publisher.send_again(sent)
        else:
            queue_with_room(client, sent)
            publisher.send(sent, sent.redaction())
        ours = only_message(idle_url), sent_event(listener)
    finally:
        app.close()
        listener.close()
        client.close()

    (celery_message, celery_event), (message, event) = celerys, ours
    assert HIDDEN not in json.dumps(message["headers"])
    varying = ("properties.delivery_tag", "properties.reply_to", "body")
    assert without(message, *varying) == without(celery_message, *varying)
    decoded = [json.loads(base64.b64decode(m["body"])) for m in (message, celery_message)]
    assert decoded[0] == decoded[1]
    assert event["channel"] == celery_event["channel"]
    assert without(event["message"], "properties.delivery_tag", "body") == without(
        celery_event["message"], "properties.delivery_tag", "body"
    )
    assert without(event["body"], "clock", "timestamp") == without(
        celery_event["body"], "clock", "timestamp"
    )
    assert abs(event["body"]["timestamp"] - time.time()) < 60


def queue_with_room(client: redis.Redis, sent: Envelope) -> None:
    """`sent` recorded as queued (as the lifecycle does), and a live worker of its queue
    with a free slot: the pump hands it out at once."""
    queued = ToolResult.accepted(sent.call, ToolStatus.QUEUED)
    assert CallStore(client, ttl_s=60).create(queued, request="r", envelope=sent.model_dump_json())
    Presence(client, "w", ttl_s=30, machine_key=None, queue=sent.queue, slots=1).renew()


def test_with_events_off_no_event_is_sent(idle_url: str) -> None:
    client = redis.Redis.from_url(idle_url)
    listener = client.pubsub(ignore_subscribe_messages=True)
    listener.psubscribe(events_channel(idle_url, "*"))  # any event here
    app = create_celery_app(Settings(redis_url=idle_url))
    app.conf.task_send_sent_event = False
    publisher = FairPublisher(Messages(app), FairQueues(client, ahead=0, batch_every=4), 0.5)
    sent = admitted(ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "a"}))
    try:
        queue_with_room(client, sent)
        publisher.send(sent, None)
        headers = only_message(idle_url)["headers"]
        event = next_message(listener, timeout_s=1)
    finally:
        app.close()
        listener.close()
        client.close()

    assert headers["id"] == sent.call.id
    assert event is None


@pytest.mark.parametrize(
    ("url", "channel"),
    [
        ("redis://127.0.0.1:6379/11", "/11.celeryev/task.sent"),
        ("redis://:secret@127.0.0.1:6379", "/0.celeryev/task.sent"),
        ("redis://127.0.0.1:6379/", "/0.celeryev/task.sent"),
    ],
)
def test_the_events_channel_is_named_from_the_url_alone(url: str, channel: str) -> None:
    """Nothing connects: a broker that is away cannot hold up an admission here."""
    assert events_channel(url, "task.sent") == channel


def test_the_script_that_hands_a_call_out_puts_it_and_its_event_on_the_broker(
    idle_url: str,
) -> None:
    """A call waiting its turn is put on the broker by the pump that hands it out, with
    its task-sent event, in the pump's own round trip."""
    client = redis.Redis.from_url(idle_url)
    listener = client.pubsub(ignore_subscribe_messages=True)
    listener.subscribe(events_channel(idle_url, "task.sent"))
    app = create_celery_app(Settings(redis_url=idle_url))
    queues = FairQueues(client, ahead=0, batch_every=4)
    publisher = FairPublisher(Messages(app), queues, kill_grace_s=0.5)
    call = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "a.txt"})
    sent = admitted(call)
    try:
        queued = ToolResult.accepted(call, ToolStatus.QUEUED)
        assert CallStore(client, ttl_s=60).create(
            queued, request="r", envelope=sent.model_dump_json()
        )
        publisher.send(sent, None)  # no worker yet: it waits its turn
        assert client.hexists(keys.SENT_MESSAGES, call.id)
        assert client.llen(READ_WRITE) == 0
        Presence(client, "w", ttl_s=30, machine_key=None, queue=READ_WRITE, slots=1).renew()

        assert publisher.pump(READ_WRITE) == 1
        headers = only_message(idle_url)["headers"]
        event = sent_event(listener)
    finally:
        app.close()
        listener.close()
        client.close()

    assert headers["id"] == call.id
    assert event["body"]["uuid"] == call.id

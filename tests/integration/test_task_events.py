"""The task events Flower reads, which toolrun's workers publish with their scripts
(`workers.task_events`) instead of Celery's worker: field for field what a Celery worker
sends (a real one, of the same Celery, beside the platform), each once, and read by
Celery's own event state as the call went."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from celery.events.state import State

from tests.integration.platform import SUPPORT, Platform, free_port, other_database, wait_for
from toolrun.config import Settings
from toolrun.embedded import terminate
from toolrun.permissions.levels import PermissionLevel
from toolrun.workers.app import create_celery_app
from toolrun.workers.wire import events_channel

READ_ONLY = PermissionLevel.READ_ONLY.queue_name
REFERENCE_DATABASE = 11  # other_database offset: no other test's
FLOWER_EVENTS_INTERVAL_S = 5  # how often Flower turns task events on (its default)


class Events:
    """Every event published on a broker's events channels, as Celery's receiver reads
    them: the body, and the kombu message around it."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.listener = self.client.pubsub(ignore_subscribe_messages=True)
        self.listener.psubscribe(events_channel(url, "*"))
        self.seen: list[dict[str, Any]] = []

    def of(self, task_id: str, until: str, timeout_s: float = 60) -> list[dict[str, Any]]:
        """The events of `task_id` so far, once one of type `until` has arrived."""
        deadline = time.monotonic() + timeout_s
        while not any(
            e["body"].get("uuid") == task_id and e["body"]["type"] == until for e in self.seen
        ):
            assert time.monotonic() < deadline, f"no {until} event for {task_id}: {self.seen}"
            published = self.listener.get_message(timeout=0.5)
            if published is not None:
                message = json.loads(published["data"])
                body = json.loads(base64.b64decode(message["body"]))
                for each in body if isinstance(body, list) else [body]:  # task.multi: a list
                    self.seen.append(
                        {"channel": published["channel"].decode(), "message": message, "body": each}
                    )
        return [e for e in self.seen if e["body"].get("uuid") == task_id]

    def close(self) -> None:
        self.listener.close()
        self.client.close()


@pytest.fixture(scope="module")
def reference(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Celery's own worker's events, by kind, of a task that succeeded and one that failed."""
    url = other_database(redis_url, REFERENCE_DATABASE)
    redis.Redis.from_url(url).flushdb()
    log = tmp_path_factory.mktemp("reference") / "worker.log"
    events = Events(url)
    argv = [sys.executable, "-m", "celery", "-A", "celery_reference", "worker", "-Q", READ_ONLY]
    argv += ["-c", "1", "-P", "prefork", "--without-gossip", "--without-mingle", "-l", "WARNING"]
    env = {**os.environ, "PYTHONPATH": str(SUPPORT), "REFERENCE_BROKER_URL": url}
    with log.open("ab") as sink:
        worker = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT)
    app = create_celery_app(Settings(redis_url=url))
    try:
        succeeded = app.send_task("reference.succeeds", queue=READ_ONLY).id
        failed = app.send_task("reference.fails", queue=READ_ONLY).id
        found = events.of(succeeded, "task-succeeded") + events.of(failed, "task-failed")
        yield {kind: [e for e in found if e["body"]["type"] == kind] for kind in KINDS}
    finally:
        app.close()
        events.close()
        terminate([worker], 15)
        redis.Redis.from_url(url).flushdb()


KINDS = ("task-sent", "task-received", "task-started", "task-succeeded", "task-failed")


def call(platform: Platform, file_path: str) -> dict[str, Any]:
    answer = httpx.post(
        f"{platform.base_url}/v1/calls?wait=30",
        json={"tool_name": "read", "arguments": {"file_path": file_path}},
        headers=platform.headers,
        timeout=60,
    )
    result: dict[str, Any] = answer.json()
    return result


@pytest.fixture
def events(platform: Platform) -> Iterator[Events]:
    listening = Events(platform.redis_url)
    try:
        yield listening
    finally:
        listening.close()


def shape(event: dict[str, Any]) -> dict[str, Any]:
    """What every event of a kind has alike: its fields' names, and its message's headers
    and properties but for its delivery tag and routing key (Celery's worker sends its
    events in batches, `task.multi`; toolrun's go one by one, each under its own type)."""
    message = json.loads(json.dumps(event["message"]))
    message["properties"].pop("delivery_tag")
    message["properties"]["delivery_info"].pop("routing_key")
    message.pop("body")
    message["headers"] = sorted(message["headers"])
    return {"fields": sorted(event["body"]), "message": message}


def test_each_event_has_the_fields_and_form_of_a_celery_workers(
    platform: Platform, events: Events, reference: dict[str, list[dict[str, Any]]]
) -> None:
    (platform.workspace / "events.txt").write_text("x\n")
    succeeded = call(platform, "events.txt")
    failed = call(platform, "no-such-file.txt")
    assert (succeeded["status"], failed["status"]) == ("success", "error")

    ours = events.of(succeeded["call_id"], "task-succeeded")
    ours += events.of(failed["call_id"], "task-failed")

    for kind in KINDS:
        theirs = {json.dumps(shape(e), sort_keys=True) for e in reference[kind]}
        mine = {json.dumps(shape(e), sort_keys=True) for e in ours if e["body"]["type"] == kind}
        assert theirs, f"Celery's worker sent no {kind}"
        assert mine == theirs, kind
    for event in ours:
        routing_key = event["body"]["type"].replace("-", ".")
        assert event["channel"] == events_channel(platform.redis_url, routing_key)
        assert event["message"]["properties"]["delivery_info"]["routing_key"] == routing_key
        assert event["message"]["headers"] == {"hostname": event["body"]["hostname"]}


def test_a_call_sends_each_event_once_and_celerys_worker_sends_none(
    platform: Platform, events: Events
) -> None:
    (platform.workspace / "once.txt").write_text("x\n")
    call_id = call(platform, "once.txt")["call_id"]

    found = events.of(call_id, "task-succeeded")
    time.sleep(1)  # anything sent twice, or late, arrives meanwhile
    found = events.of(call_id, "task-succeeded")

    assert [e["body"]["type"] for e in found] == list(KINDS[:4])
    assert not [e for e in events.seen if e["channel"].endswith(".multi")]  # Celery's batches


def test_celerys_event_state_shows_each_call_as_it_went(platform: Platform, events: Events) -> None:
    """As Flower sees them: its state is Celery's `events.state.State`."""
    (platform.workspace / "shown.txt").write_text("x\n")
    succeeded = call(platform, "shown.txt")
    failed = call(platform, "missing.txt")
    state = State()
    for event in events.of(succeeded["call_id"], "task-succeeded") + events.of(
        failed["call_id"], "task-failed"
    ):
        state.event({**event["body"], "local_received": time.time()})  # as a receiver adds

    done, broken = state.tasks[succeeded["call_id"]], state.tasks[failed["call_id"]]
    assert (done.state, done.result, done.name) == ("SUCCESS", "'success'", "toolrun.read")
    assert json.loads(done.args) == {"file_path": "shown.txt"}
    assert done.worker.hostname.startswith("read_only@")
    assert done.runtime > 0
    assert broken.state == "FAILURE"
    assert broken.exception == "ToolCallFailed('error: file not found: missing.txt')"


def test_flower_leaves_celerys_worker_events_off(platform: Platform, events: Events) -> None:
    """Flower turns Celery's task events on in every worker, every few seconds, unless
    told not to: `toolrun flower` tells it, so no event is sent twice while it watches."""
    port = free_port()
    platform.start_process("flower", "flower", f"--port={port}")
    try:
        wait_for(lambda: httpx.get(f"http://127.0.0.1:{port}/").status_code == 200, 60, "Flower")
        time.sleep(FLOWER_EVENTS_INTERVAL_S + 2)  # it would have turned them on by now
        (platform.workspace / "watched.txt").write_text("x\n")
        call_id = call(platform, "watched.txt")["call_id"]
        found = events.of(call_id, "task-succeeded")
        time.sleep(1)  # anything sent twice, or late, arrives meanwhile
        found = events.of(call_id, "task-succeeded")
    finally:
        terminate([platform.processes.pop("flower")], 15)

    assert [e["body"]["type"] for e in found] == list(KINDS[:4])
    assert not [e for e in events.seen if e["channel"].endswith(".multi")]

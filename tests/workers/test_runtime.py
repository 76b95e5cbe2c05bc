"""A worker runtime never trusts the message it is handed: it checks its own level, the
arguments it would run, and rates again a call let through as safe (real Redis)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis
from celery.exceptions import SoftTimeLimitExceeded
from tests.envelopes import envelope

from toolrun.calls.fairness import FairQueues
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.sandbox.tracking import CALL_MARKER_VAR
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolCall, ToolDescriptor, ToolExample, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.app import create_celery_app
from toolrun.workers.dispatch import FairPublisher
from toolrun.workers.messages import Messages
from toolrun.workers.presence import Presence
from toolrun.workers.runtime import WorkerRuntime

READ_WRITE = PermissionLevel.READ_WRITE


@pytest.fixture
def runtime(redis_url: str, workspace: Path, tmp_path: Path) -> WorkerRuntime:
    settings = Settings(
        redis_url=redis_url, workspace=workspace, home=tmp_path / "home", network_isolation="off"
    )
    return WorkerRuntime(settings, PermissionLevel.READ_WRITE, ToolRegistry.with_builtins())


def write_call(file_path: str, content: str = "new") -> ToolCall:
    return ToolCall(
        tool_name="write", version="1.0.0", arguments={"file_path": file_path, "content": content}
    )


def test_a_call_let_through_as_safe_that_now_needs_approval_is_denied(
    runtime: WorkerRuntime, workspace: Path
) -> None:
    """Admitted as safe (a new file); by the time it runs the file exists, and replacing
    a file needs confirmation it never had."""
    (workspace / "late.txt").write_text("someone else's")

    result = runtime.run(envelope(write_call("late.txt"), level=PermissionLevel.READ_WRITE))

    assert result is not None
    assert result.status is ToolStatus.DENIED
    assert "let through as safe, but needs approval now" in (result.error or "")
    assert (workspace / "late.txt").read_text() == "someone else's"


def test_an_approved_call_runs_on_its_approval(runtime: WorkerRuntime, workspace: Path) -> None:
    (workspace / "approved.txt").write_text("old")
    call = write_call("approved.txt")

    result = runtime.run(envelope(call, level=PermissionLevel.READ_WRITE, approved_by="ops"))

    assert result is not None
    assert result.status is ToolStatus.SUCCESS, result
    assert (workspace / "approved.txt").read_text() == "new"


def test_arguments_other_than_the_calls_are_refused(
    runtime: WorkerRuntime, workspace: Path
) -> None:
    """A message whose envelope would run other arguments than the call it names (which
    is what the history records) runs nothing."""
    call = write_call("shown.txt")
    forged = {"file_path": "hidden.txt", "content": "x"}

    result = runtime.run(envelope(call, level=PermissionLevel.READ_WRITE, arguments=forged))

    assert result is not None
    assert result.status is ToolStatus.BLOCKED
    assert result.error == "the message's arguments are not the call's with its defaults; refused"
    assert not (workspace / "hidden.txt").exists()
    assert not (workspace / "shown.txt").exists()


def test_invalid_arguments_in_a_message_run_nothing(runtime: WorkerRuntime) -> None:
    call = ToolCall(tool_name="write", version="1.0.0", arguments={"file_path": 7})

    result = runtime.run(envelope(call, level=PermissionLevel.READ_WRITE))

    assert result is not None
    assert result.status is ToolStatus.ERROR
    assert (result.error or "").startswith("invalid arguments:")


def test_the_level_in_the_message_is_not_trusted(redis_url: str, workspace: Path) -> None:
    settings = Settings(redis_url=redis_url, workspace=workspace, network_isolation="off")
    reader = WorkerRuntime(settings, PermissionLevel.READ_ONLY, ToolRegistry.with_builtins())
    call = write_call("pwned.txt")

    result = reader.run(envelope(call, level=PermissionLevel.READ_ONLY))  # a lie

    assert result is not None
    assert result.status is ToolStatus.BLOCKED
    assert result.error == "a read_only worker may not run write@1.0.0 (needs read_write)"
    assert not (workspace / "pwned.txt").exists()


def earlier_delivery_died(runtime: WorkerRuntime, call: ToolCall, times: int = 1) -> None:
    """As a worker that started the call and was lost before it ended: the delivery
    counted, the call left running."""
    for _ in range(times):
        assert (
            runtime.store.send_start(ToolResult.accepted(call, ToolStatus.RUNNING)).deliveries() > 0
        )


def test_a_redelivered_call_of_a_tool_unsafe_to_repeat_ends_without_running(
    runtime: WorkerRuntime, workspace: Path
) -> None:
    call = write_call("twice.txt")
    earlier_delivery_died(runtime, call)

    result = runtime.run(envelope(call, level=PermissionLevel.READ_WRITE))

    assert result is not None
    assert result.status is ToolStatus.ERROR
    assert result.error == (
        "worker lost after the tool started (1 time); its effects are unknown, and "
        "write@1.0.0 is not safe to run twice: not run again"
    )
    assert result.metadata["deliveries"] == 2
    assert result.metadata["tool_starts"] == 1
    assert not (workspace / "twice.txt").exists()


def test_a_redelivered_call_of_a_read_runs_again_and_says_how_often_it_started(
    runtime: WorkerRuntime, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("kept\n")
    call = ToolCall(tool_name="read", version="1.0.0", arguments={"file_path": "notes.txt"})
    earlier_delivery_died(runtime, call, times=2)

    result = runtime.run(envelope(call, level=PermissionLevel.READ_ONLY))

    assert result is not None
    assert result.status is ToolStatus.SUCCESS, result
    assert result.metadata["deliveries"] == 3
    assert result.metadata["tool_starts"] == 3


def test_a_first_delivery_starts_the_tool_once(runtime: WorkerRuntime) -> None:
    result = runtime.run(envelope(write_call("first.txt"), level=PermissionLevel.READ_WRITE))

    assert result is not None
    assert result.status is ToolStatus.SUCCESS, result
    assert (result.metadata["deliveries"], result.metadata["tool_starts"]) == (1, 1)


def test_an_ending_sends_the_next_call_waiting_its_turn(
    runtime: WorkerRuntime, redis_client: redis.Redis
) -> None:
    """One slot on the queue: the first call holds it; as it ends, the call waiting its
    turn is taken in the same round trip and its message is on the broker's queue."""
    queues = FairQueues(redis_client, ahead=0, batch_every=4)  # nothing handed out ahead
    app = create_celery_app(runtime.settings)
    publisher = FairPublisher(Messages(app), queues, kill_grace_s=1.0)
    Presence(
        redis_client, "w", ttl_s=30, machine_key=None, queue=READ_WRITE.queue_name, slots=1
    ).renew()
    first, second = (
        envelope(write_call(name), level=READ_WRITE) for name in ("first.txt", "second.txt")
    )
    for sent in (first, second):
        queued = ToolResult.accepted(sent.call, ToolStatus.QUEUED)
        assert runtime.store.create(queued, request="r", envelope=sent.model_dump_json())
        publisher.send(sent, None)
    # The first call's message, taken by its worker (the broker's queue is a list).
    redis_client.delete(READ_WRITE.queue_name)

    result = runtime.run(first, next_calls=publisher)

    assert result is not None
    assert result.status is ToolStatus.SUCCESS
    messages = redis_client.lrange(READ_WRITE.queue_name, 0, -1)
    assert [json.loads(raw)["headers"]["id"] for raw in messages] == [second.call.id]


class CutShort(Tool):
    """Starts a process with its call's marker, then is cut short by the soft time limit
    before a runner could take charge of it (as a limit landing mid-start would)."""

    descriptor = ToolDescriptor(
        name="cut_short",
        version="1.0.0",
        description="Start a sleep, then hit the soft time limit.",
        parameters={"type": "object", "properties": {}},
        returns={"type": "object"},
        examples=[ToolExample(description=f"start and stop {n}", arguments={}) for n in "123"],
        permission=PermissionLevel.READ_ONLY,
    )

    def __init__(self) -> None:
        super().__init__()
        self.started: list[subprocess.Popen[bytes]] = []

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        marker = f"{ctx.runner.label}-{len(self.started)}"
        self.started.append(
            subprocess.Popen(
                ["/bin/sleep", "300"], env={CALL_MARKER_VAR: marker}, start_new_session=True
            )
        )
        raise SoftTimeLimitExceeded


def test_a_soft_time_limit_ends_the_processes_its_call_started(
    redis_url: str, workspace: Path, tmp_path: Path
) -> None:
    tool = CutShort()
    settings = Settings(
        redis_url=redis_url, workspace=workspace, home=tmp_path / "home", network_isolation="off"
    )
    runtime = WorkerRuntime(settings, PermissionLevel.READ_ONLY, ToolRegistry([tool]))

    result = runtime.run(envelope(ToolCall(tool_name="cut_short", arguments={})))

    assert result is not None
    assert result.status is ToolStatus.TIMEOUT
    (sleep,) = tool.started
    try:
        assert sleep.wait(timeout=5) == -9
    finally:
        sleep.kill()
        sleep.wait()

"""A worker runtime running calls in-process: its log lines carry the call id, a slow call
gets a warning, and every ended call is counted in Redis."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import redis
from celery.exceptions import SoftTimeLimitExceeded

from tests.envelopes import envelope
from tests.monitoring.conftest import Configure, lines, snapshot
from toolrun.calls import keys
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolCall, ToolDescriptor, ToolExample, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.runtime import WorkerRuntime


class Chatty(Tool):
    """Logs while it runs; `stop` raises Celery's soft time limit, as a worker would."""

    descriptor = ToolDescriptor(
        name="chatty",
        version="1.0.0",
        description="Log a line, then return.",
        parameters={"type": "object", "properties": {"stop": {"type": "boolean"}}},
        returns={"type": "object"},
        examples=[
            ToolExample(description="talk", arguments={}),
            ToolExample(description="talk and stop", arguments={"stop": True}),
            ToolExample(description="talk, do not stop", arguments={"stop": False}),
        ],
        permission=PermissionLevel.READ_ONLY,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        logging.getLogger("toolrun.test.chatty").info("inside the tool")
        if arguments.get("stop"):
            raise SoftTimeLimitExceeded
        return ToolOutput({"said": "hello"})


def runtime_for(redis_url: str, workspace: Path, tmp_path: Path, **settings: Any) -> WorkerRuntime:
    return WorkerRuntime(
        Settings(
            redis_url=redis_url,
            workspace=workspace,
            home=tmp_path / "home",
            network_isolation="off",
            **settings,
        ),
        PermissionLevel.READ_ONLY,
        ToolRegistry([Chatty()]),
    )


def run(runtime: WorkerRuntime, **arguments: Any) -> ToolResult:
    call = ToolCall(tool_name="chatty", arguments=arguments, agent_id="agent-7")
    result = runtime.run(envelope(call))
    assert result is not None
    return result


def test_lines_logged_while_running_a_call_are_json_with_its_id(
    logs: Configure, redis_url: str, workspace: Path, tmp_path: Path
) -> None:
    runtime = runtime_for(redis_url, workspace, tmp_path, slow_call_ms=60_000)
    buffer = logs(log_format="json")

    result = run(runtime)

    assert result.status is ToolStatus.SUCCESS
    [inside] = [line for line in lines(buffer) if line["event"] == "inside the tool"]
    assert inside["call_id"] == result.call_id
    assert inside["logger"] == "toolrun.test.chatty"
    assert not [line for line in lines(buffer) if line["event"] == "slow call"]
    logging.getLogger("toolrun.test").info("between calls")
    assert "call_id" not in lines(buffer)[-1]


def test_a_call_over_the_threshold_logs_one_slow_call_warning(
    logs: Configure, redis_url: str, workspace: Path, tmp_path: Path
) -> None:
    runtime = runtime_for(redis_url, workspace, tmp_path, slow_call_ms=0.0001)
    buffer = logs(log_format="json")

    result = run(runtime)

    [slow] = [line for line in lines(buffer) if line["event"] == "slow call"]
    assert slow["level"] == "warning"
    assert slow["call_id"] == result.call_id
    assert slow["tool"] == "chatty"
    assert slow["agent_id"] == "agent-7"
    assert slow["execution_time_ms"] == result.metadata["execution_time_ms"] > 0


def test_every_ended_call_is_counted_with_its_execution_time(
    redis_url: str, workspace: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = runtime_for(redis_url, workspace, tmp_path)

    run(runtime)
    run(runtime)
    timed_out = run(runtime, stop=True)
    assert (
        runtime.run(  # a redelivery of an ended call is neither run nor counted again
            envelope(ToolCall(id=timed_out.call_id, tool_name="chatty"))
        )
        is None
    )

    snap = snapshot(redis_url)
    assert timed_out.status is ToolStatus.TIMEOUT
    assert timed_out.metadata["execution_time_ms"] > 0
    assert snap.calls == {("chatty", "success"): 2, ("chatty", "timeout"): 1}
    assert snap.durations["chatty"].count == 3
    # Each with its history row's makings, in the outbox with the final state.
    assert redis.Redis.from_url(redis_url).xlen(keys.HISTORY_OUTBOX) == 3

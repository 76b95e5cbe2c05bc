"""The in-process executor: every call ends in a ToolResult, whatever happens."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from toolrun.config import Settings
from toolrun.errors import SandboxViolation, ToolExecutionError, ToolTimeout
from toolrun.permissions.approvals import AutoApprover, DenyApprover, TtyApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import (
    Executor,
    Tool,
    ToolCall,
    ToolContext,
    ToolDescriptor,
    ToolExample,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    ToolStatus,
)
from toolrun.tools.builtin import builtin_tools

Action = Callable[[dict[str, Any]], Any]
CallTool = Callable[..., ToolResult]
RESULT_KEYS = {"call_id", "tool_name", "tool_version", "status", "output", "error", "metadata"}
DENY_REASON = "needs confirmation but nobody can be asked (not interactive); pass --yes to approve"


def _descriptor(name: str, version: str, *, requires_confirmation: bool) -> ToolDescriptor:
    return ToolDescriptor(
        name=name,
        version=version,
        description="Repeat the text.",
        parameters={
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "times": {"type": "integer", "minimum": 1, "default": 1},
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        returns={"type": "object", "properties": {"text": {"type": "string"}}},
        examples=[
            ToolExample(description="once", arguments={"text": "hi"}),
            ToolExample(description="twice", arguments={"text": "hi", "times": 2}),
            ToolExample(description="empty", arguments={"text": ""}),
        ],
        permission=PermissionLevel.READ_ONLY,
        requires_confirmation=requires_confirmation,
    )


def _repeat(arguments: dict[str, Any]) -> ToolOutput:
    return ToolOutput(
        output={"text": arguments["text"] * arguments["times"]}, metadata={"repeated": True}
    )


class ScriptedTool(Tool):
    """Runs `action` and records every call to `run`."""

    def __init__(
        self,
        name: str = "repeat",
        action: Action = _repeat,
        *,
        version: str = "1.0.0",
        requires_confirmation: bool = False,
    ) -> None:
        self.descriptor = _descriptor(name, version, requires_confirmation=requires_confirmation)
        self.action = action
        self.runs: list[dict[str, Any]] = []
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.runs.append(arguments)
        result: ToolOutput = self.action(arguments)
        return result


def _crash(arguments: dict[str, Any]) -> ToolOutput:
    raise RuntimeError("kaboom")


def _fail(arguments: dict[str, Any]) -> ToolOutput:
    raise ToolExecutionError("it broke", output={"partial": 1})


def _time_out(arguments: dict[str, Any]) -> ToolOutput:
    raise ToolTimeout("ran out of time", output={"partial": 2})


def _escape(arguments: dict[str, Any]) -> ToolOutput:
    raise SandboxViolation("path is outside the workspace: ../x")


def _plain_dict(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"text": arguments["text"]}


def _run(tool: Tool, ctx: ToolContext, **arguments: Any) -> ToolResult:
    call = ToolCall(tool_name=tool.descriptor.name, arguments=arguments)
    result = Executor(ToolRegistry([tool])).execute(call, ctx)
    assert result.call_id == call.id
    assert isinstance(result.metadata["execution_time_ms"], float)
    assert result.metadata["execution_time_ms"] >= 0
    return result


@pytest.fixture
def deny_ctx(settings: Settings) -> ToolContext:
    return ToolContext.create(settings, approver=DenyApprover())


def test_success(ctx: ToolContext) -> None:
    tool = ScriptedTool()

    result = _run(tool, ctx, text="ab", times=2)

    assert result.status is ToolStatus.SUCCESS
    assert result.ok
    assert result.output == {"text": "abab"}
    assert result.error is None
    assert result.tool_name == "repeat"
    assert result.tool_version == "1.0.0"
    assert result.metadata["repeated"] is True


def test_schema_defaults_are_filled_before_run(ctx: ToolContext) -> None:
    tool = ScriptedTool()

    _run(tool, ctx, text="x")

    assert tool.runs == [{"text": "x", "times": 1}]


def test_unknown_tool_lists_the_available_names(call_tool: CallTool) -> None:
    result = call_tool("nope")

    assert result.status is ToolStatus.ERROR
    names = ", ".join(sorted(tool.descriptor.name for tool in builtin_tools()))
    assert result.error == f"unknown tool: nope; available tools: {names}"
    assert result.tool_name == "nope"
    assert result.tool_version is None
    assert "execution_time_ms" in result.metadata


def test_unknown_version_names_the_version(ctx: ToolContext) -> None:
    executor = Executor(ToolRegistry([ScriptedTool()]))

    result = executor.execute(ToolCall(tool_name="repeat", version="9.9.9"), ctx)

    assert result.status is ToolStatus.ERROR
    assert result.error == "unknown tool: repeat@9.9.9; available tools: repeat"


def test_unknown_tool_in_an_empty_registry(ctx: ToolContext) -> None:
    result = Executor(ToolRegistry()).execute(ToolCall(tool_name="read"), ctx)

    assert result.error == "unknown tool: read; available tools: (none)"


def test_a_pinned_version_runs_that_version(ctx: ToolContext) -> None:
    old, new = ScriptedTool(version="1.0.0"), ScriptedTool(version="2.0.0")
    executor = Executor(ToolRegistry([old, new]))

    pinned = executor.execute(
        ToolCall(tool_name="repeat", version="1.0.0", arguments={"text": "a"}), ctx
    )
    newest = executor.execute(ToolCall(tool_name="repeat", arguments={"text": "a"}), ctx)

    assert pinned.tool_version == "1.0.0"
    assert newest.tool_version == "2.0.0"
    assert len(old.runs) == 1
    assert len(new.runs) == 1


def test_invalid_arguments_are_an_error_and_the_tool_never_runs(ctx: ToolContext) -> None:
    tool = ScriptedTool()

    result = _run(tool, ctx, times="ten")

    assert result.status is ToolStatus.ERROR
    assert result.error == (
        "invalid arguments: missing required parameter: text; "
        "parameter 'times' must be integer, got \"ten\""
    )
    assert tool.runs == []


def test_invalid_arguments_of_a_builtin(call_tool: CallTool) -> None:
    result = call_tool("read", file_path="a.txt", limit="ten")

    assert result.status is ToolStatus.ERROR
    assert result.error == "invalid arguments: parameter 'limit' must be integer, got \"ten\""


def test_a_crashing_tool_gives_an_internal_error(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="toolrun.tools.executor"):
        result = _run(ScriptedTool("crash", _crash), ctx, text="x")

    assert result.status is ToolStatus.ERROR
    assert result.error == "internal error in crash: RuntimeError('kaboom')"
    assert result.tool_version == "1.0.0"
    assert any("crash@1.0.0" in record.getMessage() for record in caplog.records)


def test_a_tool_returning_the_wrong_type_gives_an_internal_error(ctx: ToolContext) -> None:
    result = _run(ScriptedTool("sloppy", _plain_dict), ctx, text="x")

    assert result.status is ToolStatus.ERROR
    assert result.error is not None
    assert result.error.startswith("internal error in sloppy:")


def test_integer_valued_floats_never_crash_a_builtin(call_tool: CallTool, workspace: Path) -> None:
    # JSON Schema calls 2.0 an integer, so it passes validation; the tool must not crash on it.
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")

    result = call_tool("read", file_path="a.txt", offset=2.0, limit=1.0)

    assert "internal error" not in (result.error or "")
    assert result.status in {ToolStatus.SUCCESS, ToolStatus.ERROR}


def test_a_tool_failure_keeps_its_output(ctx: ToolContext) -> None:
    result = _run(ScriptedTool("fail", _fail), ctx, text="x")

    assert result.status is ToolStatus.ERROR
    assert result.error == "it broke"
    assert result.output == {"partial": 1}


def test_a_timeout_keeps_its_output(ctx: ToolContext) -> None:
    result = _run(ScriptedTool("slow", _time_out), ctx, text="x")

    assert result.status is ToolStatus.TIMEOUT
    assert result.error == "ran out of time"
    assert result.output == {"partial": 2}


def test_a_sandbox_violation_is_blocked(ctx: ToolContext) -> None:
    result = _run(ScriptedTool("escape", _escape), ctx, text="x")

    assert result.status is ToolStatus.BLOCKED
    assert result.error == "path is outside the workspace: ../x"


def test_confirmation_denied_never_runs_the_tool(deny_ctx: ToolContext) -> None:
    tool = ScriptedTool("guarded", requires_confirmation=True)

    result = _run(tool, deny_ctx, text="x")

    assert result.status is ToolStatus.DENIED
    assert result.error == f"guarded requires confirmation: {DENY_REASON}"
    assert result.tool_version == "1.0.0"
    assert tool.runs == []


def test_confirmation_approved_runs_the_tool(ctx: ToolContext) -> None:
    assert isinstance(ctx.approver, AutoApprover)
    tool = ScriptedTool("guarded", requires_confirmation=True)

    result = _run(tool, ctx, text="x")

    assert result.status is ToolStatus.SUCCESS
    assert tool.runs == [{"text": "x", "times": 1}]


def test_the_approver_sees_the_call_with_defaults(settings: Settings) -> None:
    screen = StringIO()
    approver = TtyApprover(stream=StringIO("n\n"), console=Console(file=screen, width=200))
    tool = ScriptedTool("guarded", requires_confirmation=True)

    result = _run(tool, ToolContext.create(settings, approver=approver), text="x")

    assert result.status is ToolStatus.DENIED
    assert result.error == "guarded requires confirmation: denied at the prompt"
    assert tool.runs == []
    shown = screen.getvalue()
    assert (
        "guarded 1.0.0 (risk low, policy confirm) needs confirmation: guarded requires confirmation"
        in shown
    )
    assert '"times": 1' in shown


def test_arguments_are_validated_before_asking(deny_ctx: ToolContext) -> None:
    result = _run(ScriptedTool("guarded", requires_confirmation=True), deny_ctx)

    assert result.status is ToolStatus.ERROR
    assert result.error == "invalid arguments: missing required parameter: text"


def test_builtin_bash_denied_never_runs(
    registry: ToolRegistry, deny_ctx: ToolContext, workspace: Path
) -> None:
    call = ToolCall(tool_name="bash", arguments={"command": "touch ran.txt"})

    result = Executor(registry).execute(call, deny_ctx)

    assert result.status is ToolStatus.DENIED
    assert (
        result.error == "bash runs a shell command (risk medium: the command allowlist is off): "
        f"touch ran.txt: {DENY_REASON}"
    )
    assert not (workspace / "ran.txt").exists()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (ScriptedTool(), {"text": "x"}),
        (ScriptedTool(), {}),
        (ScriptedTool("crash", _crash), {"text": "x"}),
        (ScriptedTool("fail", _fail), {"text": "x"}),
        (ScriptedTool("slow", _time_out), {"text": "x"}),
        (ScriptedTool("escape", _escape), {"text": "x"}),
        (ScriptedTool("guarded", requires_confirmation=True), {"text": "x"}),
    ],
)
def test_result_json_shape(deny_ctx: ToolContext, tool: Tool, arguments: dict[str, Any]) -> None:
    result = _run(tool, deny_ctx, **arguments)

    data = json.loads(result.model_dump_json())

    assert set(data) == RESULT_KEYS
    assert data["status"] in {status.value for status in ToolStatus}
    assert data["tool_name"] == tool.descriptor.name
    assert data["tool_version"] == "1.0.0"
    assert isinstance(data["metadata"]["execution_time_ms"], float)
    assert ToolResult.model_validate(data) == result


def test_execution_time_is_not_overridden_by_the_tool(ctx: ToolContext) -> None:
    def claims_time(arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(output=None, metadata={"execution_time_ms": "fake"})

    result = _run(ScriptedTool("liar", claims_time), ctx, text="x")

    assert result.status is ToolStatus.SUCCESS
    assert result.output is None


def test_a_misspelt_tool_gets_a_suggestion(ctx: ToolContext) -> None:
    result = Executor(ToolRegistry([ScriptedTool()])).execute(ToolCall(tool_name="repaet"), ctx)

    assert result.error == "unknown tool: repaet (did you mean repeat?); available tools: repeat"

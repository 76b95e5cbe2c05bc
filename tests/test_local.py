"""run_local: the jail is set up for the tools that may start processes, and only for them;
a tool that declared it starts none cannot start one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolrun import local
from toolrun.config import Settings
from toolrun.permissions.approvals import AutoApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.sandbox.output import BoundedBytes
from toolrun.tools import (
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

Run = Callable[[ToolContext], Any]


def _descriptor(name: str) -> ToolDescriptor:
    return ToolDescriptor(
        name=name,
        version="1.0.0",
        description="A tool of this test's.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        returns={"type": "object"},
        examples=[ToolExample(description=str(i), arguments={}) for i in range(3)],
        permission=PermissionLevel.READ_WRITE,
    )


class ProcessTool(Tool):
    """Runs `action` with its context; may start processes (the default)."""

    def __init__(self, name: str, action: Run) -> None:
        self.descriptor = _descriptor(name)
        self.action = action
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(self.action(ctx))


class NoProcessTool(ProcessTool):
    starts_processes = False


def run(settings: Settings, registry: ToolRegistry, name: str, **arguments: Any) -> ToolResult:
    return local.run_local(
        settings,
        registry,
        ToolCall(tool_name=name, arguments=arguments),
        workspace=None,
        approver=AutoApprover(),
        on_refused=lambda refusal: None,
    )


def _start(marker: Path) -> Run:
    def start(ctx: ToolContext) -> Any:
        out, err = BoundedBytes(1024), BoundedBytes(1024)
        ended = ctx.runner.run(["touch", str(marker)], timeout_s=10, stdout=out, stderr=err)
        return ended.exit_code

    return start


def test_a_read_sets_up_no_jail(settings: Settings, workspace: Path, jails: list[Settings]) -> None:
    (workspace / "a.txt").write_text("hello\n")

    result = run(settings, ToolRegistry.with_builtins(), "read", file_path="a.txt")

    assert result.status is ToolStatus.SUCCESS, result.error
    assert "hello" in result.output["content"]
    assert jails == []


def test_a_tool_that_may_start_processes_runs_in_the_jail(
    settings: Settings, workspace: Path, jails: list[Settings]
) -> None:
    marker = workspace / "started"
    registry = ToolRegistry()
    registry.register(ProcessTool("starter", _start(marker)))

    result = run(settings, registry, "starter")

    assert result.status is ToolStatus.SUCCESS, result.error
    assert result.output == 0
    assert marker.exists()
    assert jails == [settings]


def test_a_tool_that_declared_it_starts_no_process_cannot_start_one(
    settings: Settings, workspace: Path, jails: list[Settings]
) -> None:
    marker = workspace / "started"
    registry = ToolRegistry()
    registry.register(NoProcessTool("liar", _start(marker)))

    result = run(settings, registry, "liar")

    assert result.status is ToolStatus.BLOCKED
    assert result.error == (
        "cannot start touch: this tool declared that it starts no process (Tool.starts_processes)"
    )
    assert result.metadata["blocked_target"] == "touch"
    assert not marker.exists()
    assert jails == []


def test_an_unknown_tool_sets_up_no_jail(settings: Settings, jails: list[Settings]) -> None:
    result = run(settings, ToolRegistry.with_builtins(), "nope")

    assert result.status is ToolStatus.ERROR
    assert jails == []


def test_only_the_file_and_fetch_tools_declare_that_they_start_no_process() -> None:
    # Each of these is checked to start none (no ctx.runner in it, nor in what it calls):
    # adding one here is a security decision.
    declared = {tool.descriptor.name for tool in builtin_tools() if not tool.starts_processes}

    assert declared == {"read", "write", "edit", "http_fetch"}

"""Calling the workflow pack's tools through the executor, in a workspace of their own
(a real SQLite database and directory): what every workflow test starts from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.permissions.approvals import DenyApprover
from toolrun.tools import Executor, ToolCall, ToolContext, ToolResult
from toolrun.tools.loading import registry_with
from toolrun_workflow.iterations import store_for


class Runner:
    def __init__(self, tmp_path: Path, **settings: Any) -> None:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        self.workspace = workspace
        self.outside = tmp_path  # what no tool may touch: the workspace's parent
        self.settings = Settings(workspace=workspace, home=tmp_path / "home", **settings)
        self.ctx = ToolContext.create(self.settings, approver=DenyApprover())
        self.executor = Executor(registry_with([], ["workflow"]))

    def __call__(self, tool: str, **arguments: Any) -> ToolResult:
        return self.executor.execute(ToolCall(tool_name=tool, arguments=arguments), self.ctx)

    def ok(self, tool: str, **arguments: Any) -> Any:
        result = self(tool, **arguments)
        assert result.ok, result.error
        return result.output

    def start(self, name: str = "test", **arguments: Any) -> Path:
        """Start an iteration; returns its directory."""
        started = self.ok("start_iteration", name=name, **arguments)
        return self.workspace / started["directory"]

    def stage(self, stage: str) -> None:
        """Move the current iteration to `stage`, whatever the transitions allow."""
        store = store_for(self.ctx)
        current = store.current()
        assert current is not None
        with store.engine.begin() as connection:
            connection.exec_driver_sql(
                "UPDATE workflow_iterations SET stage = ? WHERE id = ?", (stage, current.id)
            )

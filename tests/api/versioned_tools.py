"""A tool registered at several versions, for the version routes (TOOLRUN_TOOL_MODULES)."""

from __future__ import annotations

from typing import Any

from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample


class Echo(Tool):
    def __init__(self, version: str) -> None:
        self.descriptor = ToolDescriptor(
            name="echo",
            version=version,
            description=f"Return the arguments (version {version}).",
            parameters={"type": "object"},
            returns={"type": "object"},
            examples=[ToolExample(description=f"example {n}", arguments={}) for n in range(3)],
            permission=PermissionLevel.READ_ONLY,
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput({"version": self.descriptor.version, **arguments})


TOOLS: list[Tool] = [Echo("1.0.0"), Echo("1.2.0"), Echo("1.10.1"), Echo("2.0.0-beta.1")]

"""Tools: the model, the registry, validation, execution and the built-in set (names
imported on first use: `toolrun.tools.model` does not pull in the registry)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun._lazy import exports

if TYPE_CHECKING:
    from toolrun.permissions.policy import Risk
    from toolrun.tools.base import Tool, ToolContext, ToolOutput
    from toolrun.tools.docs import render_markdown
    from toolrun.tools.executor import Executor
    from toolrun.tools.model import (
        ToolCall,
        ToolDescriptor,
        ToolExample,
        ToolResult,
        ToolStatus,
    )
    from toolrun.tools.registry import ToolRegistry

_HOMES = {
    "Risk": "toolrun.permissions.policy",
    "Tool": "toolrun.tools.base",
    "ToolContext": "toolrun.tools.base",
    "ToolOutput": "toolrun.tools.base",
    "render_markdown": "toolrun.tools.docs",
    "Executor": "toolrun.tools.executor",
    "ToolCall": "toolrun.tools.model",
    "ToolDescriptor": "toolrun.tools.model",
    "ToolExample": "toolrun.tools.model",
    "ToolResult": "toolrun.tools.model",
    "ToolStatus": "toolrun.tools.model",
    "ToolRegistry": "toolrun.tools.registry",
}

__all__ = [
    "Executor",
    "Risk",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDescriptor",
    "ToolExample",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolStatus",
    "render_markdown",
]
__getattr__ = exports(__name__, _HOMES)

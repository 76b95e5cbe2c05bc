"""Tools: the model, the registry, validation, execution and the built-in set."""

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

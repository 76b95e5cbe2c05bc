"""toolrun: a distributed execution platform for AI-agent tool calls."""

from toolrun.config import Settings
from toolrun.errors import ToolrunError
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import (
    Executor,
    Tool,
    ToolCall,
    ToolContext,
    ToolDescriptor,
    ToolRegistry,
    ToolResult,
    ToolStatus,
)

__version__ = "0.1.0"

__all__ = [
    "Executor",
    "PermissionLevel",
    "Settings",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDescriptor",
    "ToolRegistry",
    "ToolResult",
    "ToolStatus",
    "ToolrunError",
    "__version__",
]

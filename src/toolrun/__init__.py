"""toolrun: a distributed execution platform for AI-agent tool calls.

The public names are imported on first use: `import toolrun.x` stays cheap (the CLI's
start, and the jail's launcher, which runs with the standard library only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun._lazy import exports

if TYPE_CHECKING:
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

_HOMES = {
    "Settings": "toolrun.config",
    "ToolrunError": "toolrun.errors",
    "PermissionLevel": "toolrun.permissions.levels",
    **dict.fromkeys(
        (
            "Executor",
            "Tool",
            "ToolCall",
            "ToolContext",
            "ToolDescriptor",
            "ToolRegistry",
            "ToolResult",
            "ToolStatus",
        ),
        "toolrun.tools",
    ),
}

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


__getattr__ = exports(__name__, _HOMES)

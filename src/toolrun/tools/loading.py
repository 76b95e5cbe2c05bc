"""Registering tools from Python modules named in settings (`TOOLRUN_TOOL_MODULES`)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from toolrun.errors import ToolrunError
from toolrun.tools.base import Tool
from toolrun.tools.registry import ToolRegistry


def registry_with(modules: Iterable[str]) -> ToolRegistry:
    """The built-in tools plus every Tool in each module's ``TOOLS`` list.

    Raises:
        ToolrunError: a module cannot be imported or has no valid TOOLS list.
    """
    registry = ToolRegistry.with_builtins()
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ToolrunError(f"cannot import tool module {name!r}: {exc}") from exc
        tools = getattr(module, "TOOLS", None)
        if not isinstance(tools, list) or not all(isinstance(t, Tool) for t in tools):
            raise ToolrunError(f"tool module {name!r} must define TOOLS, a list of Tool instances")
        for tool in tools:
            registry.register(tool)
    return registry

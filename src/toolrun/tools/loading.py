"""Registering tools beyond the built-in ones: Python modules named in settings
(`TOOLRUN_TOOL_MODULES`), and installed tool packs (`TOOLRUN_TOOL_PACKS`) — packages
that declare an entry point in the ``toolrun.tools`` group whose object is a list of
Tool instances (or a function returning one)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points

from toolrun.errors import ToolrunError
from toolrun.tools.base import Tool
from toolrun.tools.registry import ToolRegistry

PACK_GROUP = "toolrun.tools"
ALL_PACKS = "*"


def registry_with(modules: Iterable[str], packs: Iterable[str] = ()) -> ToolRegistry:
    """The built-in tools plus every Tool in each module's ``TOOLS`` list and in each
    named pack ("*": every installed pack).

    Raises:
        ToolrunError: a module or pack cannot be loaded or gives no valid list of tools.
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
    for entry in chosen_packs(packs):
        for tool in pack_tools(entry):
            registry.register(tool)
    return registry


def installed_packs() -> dict[str, EntryPoint]:
    """The tool packs installed in this environment, by name."""
    return {entry.name: entry for entry in entry_points(group=PACK_GROUP)}


def chosen_packs(names: Iterable[str]) -> list[EntryPoint]:
    """The installed packs `names` asks for.

    Raises:
        ToolrunError: a name is not an installed pack.
    """
    installed = installed_packs()
    wanted = list(dict.fromkeys(names))
    if ALL_PACKS in wanted:
        return [installed[name] for name in sorted(installed)]
    missing = [name for name in wanted if name not in installed]
    if missing:
        known = ", ".join(sorted(installed)) or "none"
        raise ToolrunError(f"no tool pack named {', '.join(missing)} (installed: {known})")
    return [installed[name] for name in wanted]


def pack_tools(entry: EntryPoint) -> list[Tool]:
    """The tools of one pack.

    Raises:
        ToolrunError: it cannot be loaded or gives no list of Tool instances.
    """
    try:
        found = entry.load()
        tools = found() if callable(found) and not isinstance(found, list) else found
    except Exception as exc:  # a pack's own failure, whatever it is, named
        raise ToolrunError(
            f"tool pack {entry.name!r} ({entry.value}) failed to load: {exc}"
        ) from exc
    if not isinstance(tools, list) or not all(isinstance(t, Tool) for t in tools):
        raise ToolrunError(f"tool pack {entry.name!r} must give a list of Tool instances")
    return tools

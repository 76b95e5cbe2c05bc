"""Tool descriptors in the shapes other systems take: OpenAI function calling, Anthropic
tool use, and MCP's tools/list entries (with annotations derived from the permission
level)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from toolrun.interop.strict import strict_parameters
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolDescriptor

# OpenAI and Anthropic accept function names of 1-64 letters, digits, '_' and '-'.
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
API_NAME_LENGTH = 64
# Where a tool reaches beyond the workspace (MCP's openWorldHint).
_OPEN_WORLD_TAGS = frozenset({"network", "http", "web", "mcp"})


class ExportFormat(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    MCP = "mcp"


def api_name(name: str) -> str:
    """`name` as OpenAI and Anthropic accept it: other characters ('.' of a namespaced
    tool) become '_'."""
    return _UNSAFE.sub("_", name)[:API_NAME_LENGTH]


def api_names(names: Iterable[str]) -> dict[str, str]:
    """API-safe name → tool name, for a set of tools.

    Raises:
        ValueError: two tools would get the same API-safe name.
    """
    found: dict[str, str] = {}
    for name in names:
        safe = api_name(name)
        if found.setdefault(safe, name) != name:
            raise ValueError(f"tools {found[safe]!r} and {name!r} both export as {safe!r}")
    return found


def openai_tool(descriptor: ToolDescriptor, strict: bool = False) -> dict[str, Any]:
    """``{"type": "function", "function": {name, description, parameters}}``; with
    `strict`, parameters in strict mode's form and ``strict: true`` where they can be."""
    function: dict[str, Any] = {
        "name": api_name(descriptor.name),
        "description": descriptor.description,
        "parameters": descriptor.api_parameters(),
    }
    made = strict_parameters(function["parameters"]) if strict else None
    if made is not None:
        function |= {"parameters": made, "strict": True}
    return {"type": "function", "function": function}


def anthropic_tool(descriptor: ToolDescriptor) -> dict[str, Any]:
    """``{name, description, input_schema}``."""
    return {
        "name": api_name(descriptor.name),
        "description": descriptor.description,
        "input_schema": descriptor.api_parameters(),
    }


def mcp_annotations(descriptor: ToolDescriptor) -> dict[str, Any]:
    """MCP tool annotations from the permission level: read_only tools only read (and
    reading twice is harmless); the others change things and may destroy."""
    reads = descriptor.permission is PermissionLevel.READ_ONLY
    open_world = descriptor.permission is PermissionLevel.EXECUTE or bool(
        _OPEN_WORLD_TAGS & {descriptor.category, *descriptor.tags}
    )
    return {
        "title": descriptor.name.replace("_", " "),
        "readOnlyHint": reads,
        "destructiveHint": not reads,
        "idempotentHint": descriptor.repeat_safe,
        "openWorldHint": open_world,
    }


def mcp_tool(descriptor: ToolDescriptor) -> dict[str, Any]:
    """A tools/list entry: name, description, inputSchema, outputSchema (the tool's
    returns schema, where it describes an object), annotations."""
    found: dict[str, Any] = {
        "name": descriptor.name,
        "description": descriptor.description,
        "inputSchema": descriptor.api_parameters(),
        "annotations": mcp_annotations(descriptor),
    }
    if has_output_schema(descriptor):
        found["outputSchema"] = descriptor.returns
    return found


def has_output_schema(descriptor: ToolDescriptor) -> bool:
    """MCP's outputSchema must describe an object."""
    return descriptor.returns.get("type") == "object"


def export(
    descriptors: Iterable[ToolDescriptor], format: ExportFormat, *, strict: bool = False
) -> list[dict[str, Any]]:
    """The tools in `format`, the newest version of each name only; `strict`: OpenAI's
    strict mode wherever a tool's parameters allow it.

    Raises:
        ValueError: two tools would export under the same API-safe name, or `strict` was
            asked of another format than OpenAI's.
    """
    if strict and format is not ExportFormat.OPENAI:
        raise ValueError("strict applies to the openai format only")
    newest: dict[str, ToolDescriptor] = {}
    for descriptor in descriptors:
        known = newest.get(descriptor.name)
        if known is None or descriptor.semver > known.semver:
            newest[descriptor.name] = descriptor
    chosen = [newest[name] for name in sorted(newest)]
    if format is not ExportFormat.MCP:
        api_names(d.name for d in chosen)
    if format is ExportFormat.OPENAI:
        return [openai_tool(descriptor, strict) for descriptor in chosen]
    shape = anthropic_tool if format is ExportFormat.ANTHROPIC else mcp_tool
    return [shape(descriptor) for descriptor in chosen]

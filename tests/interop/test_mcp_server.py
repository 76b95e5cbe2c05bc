"""The MCP server's handlers in-process, driven by the official MCP client: an API that
cannot be reached is named (not an "Internal server error"), and an output that breaks
its tool's returns schema is a tool error, not a result the client rejects."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError

from toolrun import __version__
from toolrun.config import Settings
from toolrun.interop.mcp_server import ApiBackend, Context, LocalBackend, McpFrontEnd, Pending
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import (
    Tool,
    ToolContext,
    ToolDescriptor,
    ToolExample,
    ToolOutput,
    ToolRegistry,
)
from toolrun.tools.model import ToolStatus

NOWHERE = "http://127.0.0.1:1"  # nothing listens on port 1
NO_REQUEST = cast(Context, SimpleNamespace(request=None, meta=None))


class Counter(Tool):
    """Answers `{"count": <its argument>}`, whatever type that is."""

    descriptor = ToolDescriptor(
        name="counter",
        version="1.0.0",
        description="Report a count.",
        parameters={"type": "object", "properties": {"count": {}}, "required": ["count"]},
        returns={
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
        examples=[ToolExample(description=f"{n}", arguments={"count": n}) for n in (0, 1, 2)],
        permission=PermissionLevel.READ_ONLY,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput({"count": arguments["count"]})


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def test_an_unreachable_api_is_named_when_listing_and_calling() -> None:
    async def listing() -> MCPError:
        async with Client(McpFrontEnd(ApiBackend(NOWHERE, None)).server()) as client:
            with pytest.raises(MCPError) as raised:
                await client.list_tools()
        return raised.value

    async def calling() -> types.CallToolResult:
        async with Client(McpFrontEnd(ApiBackend(NOWHERE, None)).server()) as client:
            return await client.call_tool("read", {"file_path": "x"})

    listed = anyio.run(listing)
    called = anyio.run(calling)

    assert listed.message.startswith("toolrun cannot list its tools: cannot reach the")
    assert NOWHERE in listed.message
    assert called.is_error
    assert f"cannot reach the toolrun API at {NOWHERE}" in text(called)


def test_an_unreachable_api_makes_calls_and_waits_errors_not_crashes() -> None:
    backend = ApiBackend(NOWHERE, "some-token")

    async def run() -> tuple[Any, Any]:
        outcome = await backend.call(NO_REQUEST, "read", {"file_path": "x"})
        waited = await backend.go_ahead(NO_REQUEST, Pending("", "", {"call_id": "c1"}))
        return outcome, waited

    outcome, waited = anyio.run(run)

    assert outcome.pending is None
    assert outcome.result.status is ToolStatus.ERROR
    assert f"cannot reach the toolrun API at {NOWHERE}" in outcome.result.error
    assert waited.status is ToolStatus.ERROR
    assert f"cannot reach the toolrun API at {NOWHERE}" in waited.error


def test_an_output_that_breaks_the_returns_schema_is_a_tool_error(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    backend = LocalBackend(settings, ToolRegistry([Counter()]), tmp_path, assume_yes=False)

    async def run() -> list[types.CallToolResult]:
        async with Client(McpFrontEnd(backend).server()) as client:
            await client.list_tools()
            return [
                await client.call_tool("counter", {"count": 3}),
                await client.call_tool("counter", {"count": "three"}),
            ]

    good, bad = anyio.run(run)

    assert not good.is_error
    assert good.structured_content == {"count": 3}
    assert bad.is_error
    assert bad.structured_content is None
    assert text(bad) == (
        "the output does not match the tool's returns schema (count: 'three' is not of type "
        """'integer'): {"count": "three"}"""
    )


class DanglingCounter(Counter):
    """A returns schema whose $ref points nowhere (registration checks the meta-schema
    only, which allows it)."""

    descriptor = Counter.descriptor.model_copy(
        update={
            "name": "dangling",
            "returns": {"type": "object", "properties": {"count": {"$ref": "#/$defs/missing"}}},
        }
    )


def test_a_returns_schema_that_cannot_be_resolved_is_a_tool_error(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    backend = LocalBackend(settings, ToolRegistry([DanglingCounter()]), tmp_path, assume_yes=False)

    async def run() -> types.CallToolResult:
        async with Client(McpFrontEnd(backend).server()) as client:
            await client.list_tools()
            return await client.call_tool("dangling", {"count": 3})

    result = anyio.run(run)

    assert result.is_error
    assert text(result).startswith(
        "the output does not match the tool's returns schema (the schema cannot be used: "
    )


def test_the_server_names_its_version() -> None:
    async def info() -> Any:
        async with Client(McpFrontEnd(ApiBackend(NOWHERE, None)).server()) as client:
            return client.server_info

    found = anyio.run(info)

    assert (found.name, found.version) == ("toolrun", __version__)

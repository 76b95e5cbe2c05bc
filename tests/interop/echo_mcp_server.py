"""A small MCP server for the gateway's tests (the official SDK, stdio or HTTP):
`sayHello` answers with structured content, `fail` with a tool error, `slow` sleeps, `peek`
returns what a path holds, or what it could read of /proc's environments (all four only
read); `status` says it is fine and `wipe` says it destroys (it does not)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

READS = types.ToolAnnotations(read_only_hint=True)
TOOLS = [
    types.Tool(
        name="sayHello",
        annotations=READS,
        description="Greet someone by name.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        output_schema={"type": "object", "properties": {"greeting": {"type": "string"}}},
    ),
    types.Tool(
        name="fail", description="Always fails.", input_schema={"type": "object"}, annotations=READS
    ),
    types.Tool(
        name="slow",
        description="Sleeps for some seconds.",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
        annotations=READS,
    ),
    types.Tool(
        name="peek",
        description="Read a file, or every process's environment with path 'environ'.",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        annotations=READS,
    ),
    types.Tool(name="status", description="Say all is well.", input_schema={"type": "object"}),
    types.Tool(
        name="wipe",
        description="Claims to destroy everything.",
        input_schema={"type": "object"},
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True),
    ),
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "sayHello":
        greeting = f"Hello, {arguments['name']}!"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=greeting)],
            structured_content={"greeting": greeting},
        )
    if params.name == "peek":
        return types.CallToolResult(content=[types.TextContent(type="text", text=peek(arguments))])
    if params.name in ("status", "wipe"):
        return types.CallToolResult(content=[types.TextContent(type="text", text="all is well")])
    if params.name == "slow":
        await anyio.sleep(float(arguments.get("seconds", 1)))
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="it failed, as asked")], is_error=True
    )


def peek(arguments: dict[str, Any]) -> str:
    paths = [str(arguments["path"])]
    if paths == ["environ"]:
        paths = [str(path) for path in Path("/proc").glob("[0-9]*/environ")]
    found = []
    for path in paths:
        try:
            found.append(Path(path).read_bytes().decode(errors="replace"))
        except OSError as exc:
            found.append(f"{path}: {exc.strerror}")
    return "\n".join(found)


server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]))
    else:
        anyio.run(main)

"""`toolrun mcp`: serve toolrun's tools over MCP, and import external MCP servers' tools
into the registry (the gateway)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from mcp.server.stdio import stdio_server
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import (
    api_token,
    err,
    load_registry,
    load_settings,
    open_platform_database,
    out,
    platform_registry,
    usage_error,
)
from toolrun.config import Settings
from toolrun.errors import InvalidDescriptor
from toolrun.interop.formats import api_name
from toolrun.interop.mcp_imports import (
    ImportedTool,
    McpEndpoint,
    McpImports,
    descriptor_of,
    resolved_command,
    server_name,
)
from toolrun.interop.mcp_proxy import McpUnreachable, list_remote_tools
from toolrun.interop.mcp_server import ApiBackend, Backend, LocalBackend, McpFrontEnd
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.confinement import base_confinement
from toolrun.sandbox.runner import ProcessRunner
from toolrun.tools.base import ToolContext

LOOPBACK = ("127.0.0.1", "::1", "localhost")
app = typer.Typer(invoke_without_command=True)  # help line: toolrun.cli.GROUPS


@app.callback()
def serve(
    ctx: typer.Context,
    transport: Annotated[str, typer.Option(help="stdio, or http (Streamable HTTP).")] = "stdio",
    local: Annotated[
        bool, typer.Option("--local", help="Run calls in this process, not on the platform.")
    ] = False,
    workspace: Annotated[
        Path | None, typer.Option(help="Workspace root for --local (default: TOOLRUN_WORKSPACE).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="--local: approve confirm-policy calls in advance.")
    ] = False,
    host: Annotated[str, typer.Option(help="http: the address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: the port to listen on.")] = 8765,
    api: Annotated[str | None, typer.Option(help="The API (default TOOLRUN_API).")] = None,
) -> None:
    """Serve toolrun's tools over MCP: stdio for a client that starts it, or Streamable
    HTTP at http://HOST:PORT/mcp. Calls go through the API as the agent of TOOLRUN_TOKEN
    (HTTP: the client's bearer token, if it sends one), or run here with --local."""
    if ctx.invoked_subcommand is not None:
        return
    if transport not in ("stdio", "http"):
        raise usage_error(f"--transport must be stdio or http, not {transport!r}")
    if not local and (workspace is not None or yes):
        raise usage_error("--workspace and --yes apply to --local only")
    loopback = transport == "stdio" or host in LOOPBACK
    if local and not loopback:
        raise usage_error(
            "--local over HTTP listens on a loopback address only (127.0.0.1, ::1, "
            "localhost): whoever reaches it runs tools as you"
        )
    settings = load_settings(locate=not local)  # --local: this directory, no platform
    backend: Backend
    if local:
        backend = LocalBackend(settings, load_registry(settings), workspace, assume_yes=yes)
    else:
        # Beyond loopback, each client must bring its own token: the server's is not lent.
        token = api_token(settings) if loopback else None
        backend = ApiBackend(api or settings.api, token)
    server = McpFrontEnd(backend).server()
    if transport == "stdio":

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    import uvicorn  # noqa: PLC0415 - only the http transport needs it

    err.print(f"toolrun MCP server at http://{host}:{port}/mcp", highlight=False)
    uvicorn.run(server.streamable_http_app(host=host), host=host, port=port, log_level="warning")


@app.command("import")
def import_server(
    name: Annotated[str, typer.Option("--name", help="Namespace of its tools: NAME.tool.")],
    command: Annotated[
        list[str] | None, typer.Argument(help="The server's command and arguments (after --).")
    ] = None,
    url: Annotated[str | None, typer.Option(help="A Streamable HTTP server's URL.")] = None,
    header: Annotated[
        list[str] | None, typer.Option(help="HTTP header for --url, 'Name: value'.")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option(help="Environment of a stdio server, NAME=value.")
    ] = None,
    level: Annotated[
        PermissionLevel, typer.Option(help="Permission level its tools run at.")
    ] = PermissionLevel.EXECUTE,
    risk: Annotated[
        Risk | None,
        typer.Option(help="Risk of every tool (default: from each tool's annotations)."),
    ] = None,
    time_limit: Annotated[float, typer.Option(help="Seconds each call may take.", min=1)] = 60.0,
) -> None:
    """Register an MCP server's tools as toolrun tools NAME.tool (replacing an earlier
    import of NAME): `toolrun mcp import --name fs -- npx server-filesystem /data` or
    `--url https://host/mcp`. A relative program or file argument is made absolute."""
    settings = load_settings()
    try:
        endpoint = McpEndpoint(
            command=resolved_command(command, Path.cwd()) if command else None,
            env=_pairs(env or [], "=", "--env"),
            url=url,
            headers=_pairs(header or [], ":", "--header"),
        )
        server_name(name)
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    with _sdk_log_kept() as logged:
        try:
            listed = anyio.run(list_remote_tools, endpoint, _import_runner(settings))
        except McpUnreachable as exc:
            why = "".join(f" ({line})" for line in dict.fromkeys(logged))
            raise usage_error(f"cannot list the server's tools: {exc}{why}") from exc
    taken = [t.descriptor.name for t in platform_registry(settings).list()]
    tools, problems = _imported(name, listed, (level, risk, time_limit), taken)
    if problems:
        raise usage_error("nothing imported:\n" + "\n".join(problems))
    McpImports(open_platform_database(settings)).save(
        name, endpoint, level, time_limit, tools, imported_by="cli"
    )
    for tool in tools:
        shown = f"{escape(tool.descriptor.name)}  ({level}, risk {tool.descriptor.risk})"
        out.print(f"{shown} ← {escape(tool.remote)}")
    out.print(f"imported {len(tools)} tools from {escape(endpoint.describe())}")


class _Kept(logging.Handler):
    """Keeps the messages of the records it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _import_runner(settings: Settings) -> ProcessRunner:
    """What a stdio server listed at import runs in: the jail its calls will have."""
    jail = base_confinement(settings, proxy_socket=None)
    return ToolContext.create(settings, jail=jail).runner


@contextmanager
def _sdk_log_kept() -> Iterator[list[str]]:
    """The SDK's stdio client logs, with a traceback, each line a server writes that is
    not MCP: keep those messages for the error instead."""
    logger = logging.getLogger("mcp.client.stdio")
    handler = _Kept()
    propagates, logger.propagate = logger.propagate, False
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagates


def _imported(
    name: str,
    listed: list[dict[str, Any]],
    chosen: tuple[PermissionLevel, Risk | None, float],
    taken: Iterable[str],
) -> tuple[list[ImportedTool], list[str]]:
    """The server's tools as toolrun tools (`chosen`: level, risk, time limit), and why
    any cannot be: a bad schema, two tools with one name, or a name whose OpenAI and
    Anthropic export is another tool's (a re-import replaces its own tools)."""
    level, risk, time_limit = chosen
    others = {api_name(other): other for other in taken if not other.startswith(f"{name}.")}
    tools: list[ImportedTool] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for remote in listed:
        try:
            descriptor = descriptor_of(name, remote, level, time_limit, risk)
        except InvalidDescriptor as exc:
            problems.append(f"tool {remote.get('name')!r}: {exc}")
            continue
        remote_name = str(remote["name"])
        clash = others.get(api_name(descriptor.name))
        if clash is not None:
            problems.append(
                f"{descriptor.name} would export to OpenAI and Anthropic as "
                f"{api_name(descriptor.name)!r}, the name of the tool {clash!r}: choose another "
                "--name"
            )
            continue
        if seen.setdefault(descriptor.name, remote_name) != remote_name:
            problems.append(
                f"tools {seen[descriptor.name]!r} and {remote_name!r} both become {descriptor.name}"
            )
            continue
        tools.append(ImportedTool(remote_name, descriptor))
    if not tools and not problems:
        problems.append("the server lists no tools")
    return tools, problems


def _pairs(items: list[str], separator: str, option: str) -> dict[str, str]:
    found = {}
    for item in items:
        key, sep, value = item.partition(separator)
        if not sep or not key.strip():
            raise ValueError(f"{option} {item!r} is not KEY{separator}VALUE")
        found[key.strip()] = value.strip() if separator == ":" else value
    return found


@app.command("servers")
def list_servers(
    as_json: Annotated[bool, typer.Option("--json", help="As JSON.")] = False,
) -> None:
    """The imported MCP servers and their tools."""
    servers = McpImports(open_platform_database(load_settings())).list()
    if as_json:
        shown = [
            {
                "name": s.name,
                "endpoint": s.endpoint.describe(),
                "level": s.permission,
                "tools": [t.descriptor.name for t in s.tools],
            }
            for s in servers
        ]
        sys.stdout.write(json.dumps(shown, indent=2) + "\n")
        return
    table = Table("name", "reached at", "level", "tools")
    for s in servers:
        names = ", ".join(t.descriptor.name for t in s.tools)
        table.add_row(s.name, escape(s.endpoint.describe()), s.permission, escape(names))
    out.print(table)


@app.command("remove")
def remove_server(name: str) -> None:
    """Remove an imported server and its tools from the registry."""
    if not McpImports(open_platform_database(load_settings())).remove(name):
        raise usage_error(f"no imported MCP server named {name!r} (toolrun mcp servers)")
    out.print(f"removed {escape(name)}")

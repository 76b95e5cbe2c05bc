"""The MCP gateway's client side: list an external server's tools, and run a call on it
from a worker (`McpProxyTool`). Each call opens its own connection (a stdio server is
started for the call, in the workspace and in the call's jail, like every process a tool
starts; an HTTP server is reached at its URL), so no
state is shared between calls or worker processes."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.interop.mcp_imports import ImportedTool, McpEndpoint
from toolrun.permissions.policy import Concern, Risk
from toolrun.sandbox.denials import denials
from toolrun.sandbox.jail import launch
from toolrun.sandbox.runner import ProcessRunner
from toolrun.sandbox.tracking import new_tracker
from toolrun.tools.base import Tool, ToolContext, ToolOutput

CONNECT_TIMEOUT_S = 30.0
# What a stdio server inherits from the worker's environment (its own env comes on top).
_INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "PYTHONPATH")


class McpUnreachable(ToolExecutionError):
    """The server could not be started or reached, or broke off."""


def _client(endpoint: McpEndpoint, runner: ProcessRunner | None, timeout_s: float) -> Client:
    if endpoint.command is not None:
        return Client(
            _stdio(endpoint.command, endpoint.env, runner, timeout_s),
            read_timeout_seconds=timeout_s,
            mode="legacy",
        )
    assert endpoint.url is not None  # noqa: S101 - an endpoint has a command or a URL
    http = httpx2.AsyncClient(headers=endpoint.headers, timeout=timeout_s)
    transport: AbstractAsyncContextManager[Any] = streamable_http_client(
        endpoint.url, http_client=http
    )
    return Client(transport, read_timeout_seconds=timeout_s, mode="legacy")


def _stdio(
    command: tuple[str, ...],
    env: dict[str, str],
    runner: ProcessRunner | None,
    timeout_s: float,
) -> StdioServerParameters:
    """How the SDK starts a stdio server: through the jail's launcher, with the sandbox's
    environment only, where the runner has a jail; else under the sandbox's environment
    (the worker's own PATH and HOME where there is no runner: an import by the CLI)."""
    if runner is None:
        inherited = {k: v for k in _INHERITED if (v := os.environ.get(k)) is not None}
        return StdioServerParameters(
            command=command[0], args=list(command[1:]), env={**inherited, **env}
        )
    runner.refuse_if_barred(command[0])
    if runner.jail is None:
        return StdioServerParameters(
            command=command[0], args=list(command[1:]), env={**runner.env, **env}, cwd=runner.cwd
        )
    plan = runner.plan(runner.cwd, timeout_s, env={**runner.env, **env})
    argv, carried = launch.command(plan, list(command))
    return StdioServerParameters(command=argv[0], args=argv[1:], env=carried, cwd=runner.cwd)


async def list_remote_tools(
    endpoint: McpEndpoint, runner: ProcessRunner | None = None
) -> list[dict[str, Any]]:
    """The server's tools/list entries (every page), in MCP's JSON shape.

    Raises:
        McpUnreachable: the server could not be started, reached or understood.
    """
    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S):
            async with _client(endpoint, runner, CONNECT_TIMEOUT_S) as client:
                listed = await client.list_tools()
                tools = list(listed.tools)
                while listed.next_cursor:
                    listed = await client.list_tools(cursor=listed.next_cursor)
                    tools += listed.tools
    except TimeoutError as exc:
        raise McpUnreachable(
            f"{endpoint.describe()}: no answer in {CONNECT_TIMEOUT_S:g} s"
        ) from exc
    except Exception as exc:  # whatever the server or the connection did: say what
        raise McpUnreachable(f"{endpoint.describe()}: {_reason(exc)}") from exc
    return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]


async def call_remote(
    endpoint: McpEndpoint,
    remote: str,
    arguments: dict[str, Any],
    *,
    runner: ProcessRunner | None,
    timeout_s: float,
) -> types.CallToolResult:
    """Call one tool on the server.

    Raises:
        ToolTimeout: no result within `timeout_s`.
        McpUnreachable: the server could not be started, reached or understood.
    """
    try:
        with anyio.fail_after(timeout_s):
            async with _client(endpoint, runner, timeout_s) as client:
                return await client.call_tool(remote, arguments)
    except TimeoutError as exc:
        raise ToolTimeout(f"the MCP server did not answer within {timeout_s:g} s") from exc
    except Exception as exc:  # whatever the server or the connection did: say what
        raise McpUnreachable(f"MCP server {endpoint.describe()}: {_reason(exc)}") from exc


def _reason(exc: BaseException) -> str:
    """The first real error inside task-group wrappers, named."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def output_of(result: types.CallToolResult) -> Any:
    """A call result as a tool output: its structured content, else its text (JSON when
    it is JSON), else its content blocks."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if len(texts) == len(result.content):
        text = "\n".join(texts)
        try:
            return json.loads(text)
        except ValueError:
            return text
    return [
        block.model_dump(by_alias=True, exclude_none=True, mode="json") for block in result.content
    ]


class McpProxyTool(Tool):
    """A tool of an imported MCP server: each call goes to the server."""

    def __init__(self, imported: ImportedTool, endpoint: McpEndpoint) -> None:
        self.descriptor = imported.descriptor
        self.remote = imported.remote
        self.endpoint = endpoint
        super().__init__()

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern | None:
        """Its import's risk (what toolrun cannot see, it cannot judge call by call)."""
        risk = self.descriptor.risk
        if risk is Risk.LOW:
            return super().assess(arguments, ctx)
        server = self.descriptor.imported_from
        return Concern(
            risk,
            f"{self.descriptor.name} runs {self.remote!r} on the MCP server {server!r}, which "
            f"may change or destroy things (risk {risk}, set at import)",
        )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        # The server's processes in a cgroup of the call's: pids.max caps them, and
        # nothing of them outlives the call.
        tracker = new_tracker(
            f"{ctx.runner.label or 'mcp'}-{secrets.token_hex(8)}",
            use_cgroups=ctx.runner.use_cgroups,
            max_processes=ctx.runner.max_processes,
        )
        runner = dataclasses.replace(ctx.runner, join=tuple(tracker.join_files()))
        try:
            result = anyio.run(
                lambda: call_remote(
                    self.endpoint,
                    self.remote,
                    arguments,
                    runner=runner,
                    timeout_s=self.descriptor.time_limit_s,
                )
            )
        finally:
            tracker.kill_all()
            tracker.close()
        output = output_of(result)
        if result.is_error:
            raise ToolExecutionError(output if isinstance(output, str) else json.dumps(output))
        metadata: dict[str, Any] = {"mcp_server": self.endpoint.describe()}
        if ctx.runner.jail is not None and self.endpoint.command is not None:
            said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
            refused = denials(said, ctx.workspace.root)
            if refused:  # what the server's jail refused it, for the security log
                metadata["jail_denied"] = [{"path": path, "error": why} for path, why in refused]
        return ToolOutput(output, metadata)

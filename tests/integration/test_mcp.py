"""The MCP server in front of the platform (Streamable HTTP and stdio, calls through the
API as an agent) and the MCP gateway (an external server's tools imported, run by a
worker, in the history) — all with the official MCP SDK's client and servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.integration.platform import Platform, free_port, wait_for
from toolrun.permissions.levels import PermissionLevel

ECHO_SERVER = str(Path(__file__).parents[1] / "interop" / "echo_mcp_server.py")


def serve(command: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )

    def answers() -> bool:
        return httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1).status_code < 500

    wait_for(answers, 30, f"an MCP server on port {port}")
    return process


@pytest.fixture(scope="module")
def mcp_url(platform: Platform) -> Iterator[str]:
    """`toolrun mcp --transport http` in front of the platform, as its admin by default."""
    port = free_port()
    env = {**platform.env, "TOOLRUN_API": platform.base_url}
    command = [sys.executable, "-m", "toolrun", "mcp", "--transport", "http", "--port", str(port)]
    process = serve(command, env, port)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(10)


def over_http(
    url: str,
    scenario: Callable[[Client], Awaitable[Any]],
    token: str | None = None,
    answer: bool | None = None,
) -> Any:
    async def elicited(context: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"go_ahead": bool(answer)})

    async def run() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            callback = None if answer is None else elicited
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, elicitation_callback=callback) as client:
                return await scenario(client)

    return anyio.run(run)


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def test_over_http_the_platforms_tools_are_listed_and_called(
    platform: Platform, mcp_url: str, api: httpx.Client
) -> None:
    marker = f"mcp{uuid.uuid4().hex[:8]}"

    async def scenario(client: Client) -> tuple[list[str], list[types.CallToolResult]]:
        names = [tool.name for tool in (await client.list_tools()).tools]
        return names, [
            await client.call_tool("read", {"file_path": "hello.txt"}),
            await client.call_tool("grep", {"pattern": marker}),
            await client.call_tool("bash", {"command": "sleep 5", "timeout": 1}),
        ]

    names, (read, grep, slow) = over_http(mcp_url, scenario)

    assert {"read", "grep", "write", "bash"} <= set(names)
    assert not read.is_error
    assert "hello from the workspace" in read.structured_content["content"]  # type: ignore[index]
    assert not grep.is_error
    assert slow.is_error
    assert text(slow).startswith("timeout:")

    def recorded() -> bool:
        rows = api.get("/v1/history", params={"tool": "grep", "limit": 200}).json()["rows"]
        return any(row["arguments"].get("pattern") == marker for row in rows)

    wait_for(recorded, 30, "the grep call in the history")


def test_the_clients_token_decides_what_it_sees_and_may_call(
    platform: Platform, mcp_url: str
) -> None:
    token = platform.agent(f"mcp-reader-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)

    async def scenario(client: Client) -> tuple[list[str], types.CallToolResult]:
        names = [tool.name for tool in (await client.list_tools()).tools]
        return names, await client.call_tool("write", {"file_path": "x.txt", "content": "x"})

    names, write = over_http(mcp_url, scenario, token=token)

    assert "read" in names
    assert "write" not in names
    assert write.is_error
    assert text(write) == "blocked: agent may not call this tool (needs read_write, has read_only)"


def test_a_bad_token_is_named_as_the_apis_refusal(mcp_url: str) -> None:
    async def scenario(client: Client) -> tuple[MCPError, types.CallToolResult]:
        called = await client.call_tool("read", {"file_path": "hello.txt"})
        with pytest.raises(MCPError) as listed:
            await client.list_tools()
        return listed.value, called

    listed, called = over_http(mcp_url, scenario, token="not-a-token")  # noqa: S106 - wrong on purpose

    assert listed.message.startswith("toolrun cannot list its tools: the API at http://")
    assert "refused (401)" in listed.message
    assert called.is_error
    assert "refused (401)" in text(called)


def test_a_call_waiting_for_approval_is_reported_or_asked_about(mcp_url: str) -> None:
    async def scenario(client: Client) -> types.CallToolResult:
        return await client.call_tool("bash", {"command": "rm -rf no-such-dir"})

    unasked = over_http(mcp_url, scenario)
    declined = over_http(mcp_url, scenario, answer=False)

    assert unasked.is_error
    assert "waits for an operator's approval" in text(unasked)
    assert "toolrun approvals approve" in text(unasked)
    assert declined.is_error
    assert text(declined) == "not run: the user said no"


def test_over_stdio_calls_go_through_the_api_as_the_token_agent(platform: Platform) -> None:
    token = platform.agent(f"mcp-stdio-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolrun", "mcp"],
        env={**platform.env, "TOOLRUN_API": platform.base_url, "TOOLRUN_TOKEN": token},
    )

    async def run() -> tuple[list[str], list[types.CallToolResult]]:
        async with Client(params) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, [
                await client.call_tool("read", {"file_path": "hello.txt"}),
                await client.call_tool("grep", {"pattern": "hello from", "output_mode": "content"}),
                await client.call_tool("write", {"file_path": "x.txt", "content": "x"}),
            ]

    names, (read, grep, write) = anyio.run(run)

    assert "write" not in names
    assert not read.is_error
    assert not grep.is_error
    assert "hello.txt:1:hello from the workspace" in text(grep)
    assert write.is_error
    assert text(write) == "blocked: agent may not call this tool (needs read_write, has read_only)"


def test_the_gateway_imports_a_stdio_server_and_runs_its_tools_on_a_worker(
    platform: Platform, api: httpx.Client
) -> None:
    # Typed relative to the CLI's directory; calls start the server in the workspace.
    relative = [os.path.relpath(sys.executable), os.path.relpath(ECHO_SERVER)]
    imported = platform.cli("mcp", "import", "--name", "echo", "--", *relative)
    listed = platform.cli("mcp", "servers", "--json")
    exported = platform.cli("tools", "export", "--format", "openai")
    shown = platform.cli("tools", "list", "--json")

    def known() -> bool:
        return api.get("/v1/tools/echo.say_hello").status_code == 200

    wait_for(known, 30, "echo.say_hello in the registry")
    hello = api.post(
        "/v1/calls",
        params={"wait": 60},
        json={"tool_name": "echo.say_hello", "arguments": {"name": "Ada"}},
    ).json()
    failed = api.post(
        "/v1/calls", params={"wait": 60}, json={"tool_name": "echo.fail", "arguments": {}}
    ).json()
    wipe = api.post(
        "/v1/calls", params={"wait": 5}, json={"tool_name": "echo.wipe", "arguments": {}}
    ).json()
    descriptor = api.get("/v1/tools/echo.say_hello").json()

    assert imported.returncode == 0, imported.stderr
    assert "echo.say_hello  (execute, risk low) ← sayHello" in imported.stdout
    assert "echo.wipe  (execute, risk high) ← wipe" in imported.stdout
    [server] = [s for s in json.loads(listed.stdout) if s["name"] == "echo"]
    assert server["endpoint"] == f"{sys.executable} {ECHO_SERVER}"  # made absolute
    assert sorted(server["tools"]) == [
        "echo.fail",
        "echo.peek",
        "echo.say_hello",
        "echo.slow",
        "echo.status",
        "echo.wipe",
    ]
    assert exported.returncode == 0, exported.stderr
    assert "echo_say_hello" in {tool["function"]["name"] for tool in json.loads(exported.stdout)}
    assert "echo.wipe" in {tool["name"] for tool in json.loads(shown.stdout)}
    assert (descriptor["permission"], descriptor["category"]) == ("execute", "mcp")
    assert hello["status"] == "success", hello
    assert hello["output"] == {"greeting": "Hello, Ada!"}
    assert hello["metadata"]["worker"].startswith("execute@")
    assert failed["status"] == "error"
    assert failed["error"] == "it failed, as asked"
    assert wipe["status"] == "awaiting_approval", wipe
    assert (wipe["metadata"]["risk"], wipe["metadata"]["policy"]) == ("high", "dangerous")
    assert "runs 'wipe' on the MCP server 'echo'" in wipe["error"]

    def recorded() -> bool:
        rows = api.get("/v1/history", params={"tool": "echo.say_hello"}).json()["rows"]
        return any(row["call_id"] == hello["call_id"] for row in rows)

    wait_for(recorded, 30, "the proxied call in the history")
    api.post(f"/v1/calls/{wipe['call_id']}/deny", json={"reason": "test over"})
    removed = platform.cli("mcp", "remove", "echo")
    assert removed.returncode == 0
    wait_for(lambda: api.get("/v1/tools/echo.say_hello").status_code == 404, 30, "its removal")


def test_an_import_whose_export_name_is_taken_is_refused(
    platform: Platform, api: httpx.Client
) -> None:
    done = platform.cli("mcp", "import", "--name", "git", "--", sys.executable, ECHO_SERVER)
    exported = api.get("/v1/tools", params={"format": "openai"})

    assert done.returncode == 2
    assert (
        "git.status would export to OpenAI and Anthropic as 'git_status', the name of the "
        "tool 'git_status': choose another --name"
    ) in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert exported.status_code == 200
    assert api.get("/v1/tools/git.say_hello").status_code == 404


def test_the_gateway_imports_an_http_server_at_a_chosen_level(
    platform: Platform, api: httpx.Client
) -> None:
    port = free_port()
    process = serve([sys.executable, ECHO_SERVER, "http", str(port)], dict(os.environ), port)
    try:
        imported = platform.cli(
            "mcp",
            "import",
            "--name",
            "web_echo",
            "--url",
            f"http://127.0.0.1:{port}/mcp",
            "--level",
            "read_only",
            "--time-limit",
            "2",
        )
        wait_for(
            lambda: api.get("/v1/tools/web_echo.say_hello").status_code == 200, 30, "the import"
        )
        hello = api.post(
            "/v1/calls",
            params={"wait": 60},
            json={"tool_name": "web_echo.say_hello", "arguments": {"name": "Bo"}},
        ).json()
        slow = api.post(
            "/v1/calls",
            params={"wait": 60},
            json={"tool_name": "web_echo.slow", "arguments": {"seconds": 10}},
        ).json()
    finally:
        process.terminate()
        process.wait(10)
        platform.cli("mcp", "remove", "web_echo")

    assert imported.returncode == 0, imported.stderr
    assert hello["status"] == "success", hello
    assert hello["metadata"]["worker"].startswith("read_only@")
    assert slow["status"] == "timeout", slow


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "nothing"], "an MCP server is reached by a command or by a URL"),
        (["--name", "Bad-Name", "--", "true"], "server name 'Bad-Name' must be lowercase"),
        (["--name", "gone", "--url", "http://127.0.0.1:9/mcp"], "cannot list the server's tools"),
        (["--name", "hdr", "--url", "http://x/mcp", "--header", "nocolon"], "is not KEY:VALUE"),
        (["--name", "hi", "--", "echo", "hi"], "(Failed to parse JSONRPC message from server)"),
        (["--name", "rel", "--", "./no-such-server"], "no program './no-such-server'"),
    ],
)
def test_bad_imports_are_refused_clearly(platform: Platform, args: list[str], message: str) -> None:
    done = platform.cli("mcp", "import", *args)

    assert done.returncode == 2
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr

"""`toolrun mcp --local` over stdio, driven by the official MCP client: tools with their
schemas and annotations, calls, blocked calls and timeouts as tool errors, and calls that
need confirmation asked through elicitation (both protocol eras) or refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from toolrun.config import Settings
from toolrun.interop.mcp_server import LocalBackend, McpFrontEnd
from toolrun.tools import ToolRegistry

TOOLRUN = str(Path(sys.executable).with_name("toolrun"))


def server(workspace: Path, home: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=TOOLRUN,
        args=["mcp", "--local", "--workspace", str(workspace), *extra],
        env={"TOOLRUN_HOME": str(home), "PATH": os.environ["PATH"]},
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nTODO beta\n")
    return root


def session(
    params: StdioServerParameters,
    scenario: Callable[[Client], Awaitable[Any]],
    *,
    mode: str = "auto",
    answer: bool | None = None,
) -> Any:
    async def elicited(context: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(request.message)
        return types.ElicitResult(action="accept", content={"go_ahead": bool(answer)})

    asked: list[str] = []

    async def run() -> Any:
        callback = None if answer is None else elicited
        async with Client(params, mode=mode, elicitation_callback=callback) as client:
            return await scenario(client), asked

    return anyio.run(run)


def text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def test_tools_are_listed_with_schemas_and_annotations(workspace: Path, tmp_path: Path) -> None:
    async def scenario(client: Client) -> list[types.Tool]:
        return list((await client.list_tools()).tools)

    tools, _ = session(server(workspace, tmp_path / "home"), scenario)

    by_name = {tool.name: tool for tool in tools}
    assert {"read", "grep", "write", "bash"} <= set(by_name)
    read = by_name["read"]
    assert read.input_schema["required"] == ["file_path"]
    assert read.output_schema is not None
    assert read.annotations is not None
    assert (read.annotations.read_only_hint, read.annotations.destructive_hint) == (True, False)
    assert by_name["bash"].annotations is not None
    assert by_name["bash"].annotations.destructive_hint is True


def test_read_and_grep_run_and_blocked_or_slow_calls_are_tool_errors(
    workspace: Path, tmp_path: Path
) -> None:
    async def scenario(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool("read", {"file_path": "notes.txt"}),
            await client.call_tool("grep", {"pattern": "TODO", "output_mode": "content"}),
            await client.call_tool("read", {"file_path": "/etc/passwd"}),
            await client.call_tool("bash", {"command": "sleep 5", "timeout": 1}),
            await client.call_tool("read", {}),
        ]

    (read, grep, outside, slow, bad), _ = session(server(workspace, tmp_path / "home"), scenario)

    assert not read.is_error
    assert read.structured_content is not None
    assert "TODO beta" in read.structured_content["content"]
    assert not grep.is_error
    assert "notes.txt:2:TODO beta" in text(grep)
    assert outside.is_error
    assert text(outside) == "blocked: path is outside the workspace: /etc/passwd"
    assert slow.is_error
    assert text(slow).startswith("timeout:")
    assert bad.is_error
    assert "file_path" in text(bad)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 (input_required), 2025-11-25
def test_a_call_needing_confirmation_is_asked_through_elicitation(
    workspace: Path, tmp_path: Path, mode: str
) -> None:
    params = server(workspace, tmp_path / "home")

    async def replace(client: Client) -> types.CallToolResult:
        return await client.call_tool("write", {"file_path": "notes.txt", "content": "new\n"})

    refused, asked_no = session(params, replace, mode=mode, answer=False)
    kept = (workspace / "notes.txt").read_text()
    done, asked_yes = session(params, replace, mode=mode, answer=True)

    assert refused.is_error
    assert text(refused) == "not run: the user said no"
    assert kept == "alpha\nTODO beta\n"
    assert "write replaces the existing file notes.txt" in asked_no[0]
    assert not done.is_error
    assert len(asked_yes) == 1
    assert (workspace / "notes.txt").read_text() == "new\n"


def test_without_elicitation_a_confirmation_is_a_clear_tool_error(
    workspace: Path, tmp_path: Path
) -> None:
    async def replace(client: Client) -> types.CallToolResult:
        return await client.call_tool("write", {"file_path": "notes.txt", "content": "new\n"})

    refused, _ = session(server(workspace, tmp_path / "home"), replace)
    approved, _ = session(server(workspace, tmp_path / "home", "--yes"), replace)

    assert refused.is_error
    assert text(refused).startswith("write (risk medium, policy confirm) needs confirmation")
    assert not approved.is_error  # --yes approves confirm calls in advance
    assert (workspace / "notes.txt").read_text() == "new\n"


def documented_config(marker: str) -> dict[str, Any]:
    """The `mcpServers` JSON snippet of docs/interop.md whose text holds `marker`."""
    docs = (Path(__file__).parents[2] / "docs" / "interop.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", docs, re.DOTALL)
    [found] = [json.loads(block) for block in blocks if marker in block]
    servers: dict[str, Any] = found["mcpServers"]
    return servers


def test_the_documented_local_snippet_starts_a_working_server(
    workspace: Path, tmp_path: Path
) -> None:
    [entry] = documented_config('"--local"').values()
    args = [str(workspace) if arg == "/path/to/project" else arg for arg in entry["args"]]
    params = StdioServerParameters(
        command=TOOLRUN if entry["command"] == "toolrun" else entry["command"],
        args=args,
        env={"TOOLRUN_HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]},
    )

    async def scenario(client: Client) -> types.CallToolResult:
        return await client.call_tool("grep", {"pattern": "TODO", "output_mode": "content"})

    found, _ = session(params, scenario)

    assert "notes.txt:2:TODO beta" in text(found)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--local", "--transport", "http", "--host", "0.0.0.0"],  # noqa: S104 - refused
            "listens on a loopback address only",
        ),
        (["--transport", "carrier-pigeon"], "--transport must be stdio or http"),
        (["--yes"], "--workspace and --yes apply to --local only"),
    ],
)
def test_unsafe_or_bad_server_options_are_refused(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = subprocess.run(
        [TOOLRUN, "mcp", *args],
        env={**os.environ, "TOOLRUN_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert message in " ".join(done.stderr.split())


def test_a_forged_request_state_resumes_nothing(workspace: Path, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    backend = LocalBackend(settings, ToolRegistry.with_builtins(), workspace, assume_yes=False)
    forged = json.dumps({"name": "write", "arguments": {"file_path": "notes.txt", "content": ""}})
    yes = types.ElicitResult(action="accept", content={"go_ahead": True})

    async def run() -> types.CallToolResult:
        async with Client(McpFrontEnd(backend).server()) as client:
            return await client.call_tool(
                "write",
                {"file_path": "notes.txt", "content": ""},
                input_responses={"toolrun_approval": yes},
                request_state=forged,
            )

    result = anyio.run(run)

    assert result.is_error
    assert text(result) == "the call's request_state is not the one toolrun sent"
    assert (workspace / "notes.txt").read_text() == "alpha\nTODO beta\n"

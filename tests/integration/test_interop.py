"""Schema export over the API and the CLI, and a model's tool calls run through the
platform by the SDK."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.integration.platform import Platform, wait_for
from toolrun.client import AsyncClient, Client
from toolrun.permissions.levels import PermissionLevel

ECHO_SERVER = str(Path(__file__).parents[1] / "interop" / "echo_mcp_server.py")


def test_the_api_exports_the_tools_an_agent_may_call(platform: Platform) -> None:
    name = f"reader-{uuid.uuid4().hex[:6]}"
    token = platform.agent(name, PermissionLevel.READ_ONLY)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=platform.base_url, headers=headers, timeout=30) as reader:
        openai = reader.get("/v1/tools", params={"format": "openai"}).json()
        anthropic = reader.get("/v1/tools", params={"format": "anthropic"}).json()
        mcp = reader.get("/v1/tools", params={"format": "mcp"}).json()
        bad = reader.get("/v1/tools", params={"format": "xml"})
    cli = platform.cli("tools", "export", "--format", "anthropic", "--agent", name)
    unknown = platform.cli("tools", "export", "--agent", "nobody-here")

    names = {tool["function"]["name"] for tool in openai}
    assert "read" in names
    assert "write" not in names  # above the agent's ceiling
    assert {tool["name"] for tool in anthropic} == names == {tool["name"] for tool in mcp}
    read = next(tool for tool in mcp if tool["name"] == "read")
    assert read["annotations"]["readOnlyHint"] is True
    assert read["outputSchema"]["type"] == "object"
    assert bad.status_code == 422
    assert cli.returncode == 0, cli.stderr
    exported = {tool["name"]: tool for tool in json.loads(cli.stdout)}
    assert "write" not in exported
    # The CLI's registry lacks the platform's test-only tool modules.
    assert exported["read"] == next(tool for tool in anthropic if tool["name"] == "read")
    assert unknown.returncode == 2
    assert "no agent named 'nobody-here'" in unknown.stderr


OPENAI_RESPONSE: dict[str, Any] = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"file_path": "hello.txt"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"limit": 2}'},
                    },
                    {
                        "id": "call_3",
                        "type": "function",
                        "function": {"name": "teleport", "arguments": "{}"},
                    },
                ],
            }
        }
    ]
}
ANTHROPIC_RESPONSE = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "glob", "input": {"pattern": "*.txt"}},
    ],
}


def test_the_sdk_runs_a_models_tool_calls_and_answers_in_its_format(platform: Platform) -> None:
    with Client(platform.base_url, token=platform.token) as client:
        messages = client.run_tool_calls(OPENAI_RESPONSE)
        exported = client.export_tools("anthropic")

    async def anthropic() -> list[Any]:
        async with AsyncClient(platform.base_url, token=platform.token) as client:
            return await client.run_tool_calls(ANTHROPIC_RESPONSE)

    [reply] = asyncio.run(anthropic())

    assert "input_schema" in next(tool for tool in exported if tool["name"] == "read")
    assert [m["tool_call_id"] for m in messages] == ["call_1", "call_2", "call_3"]
    assert all(m["role"] == "tool" for m in messages)
    assert "hello" in messages[0]["content"]  # the file's numbered lines
    assert messages[1]["content"].startswith("refused (422): invalid arguments")
    assert messages[2]["content"].startswith("unknown tool 'teleport'")
    assert reply["role"] == "user"
    [block] = reply["content"]
    assert (block["type"], block["tool_use_id"], block["is_error"]) == (
        "tool_result",
        "toolu_1",
        False,
    )
    assert "hello.txt" in block["content"]


def test_the_openai_export_is_strict_on_request(platform: Platform, api: httpx.Client) -> None:
    strict = api.get("/v1/tools", params={"format": "openai", "strict": "true"}).json()
    anthropic = api.get("/v1/tools", params={"format": "anthropic", "strict": "true"})
    cli = platform.cli("tools", "export", "--format", "openai", "--strict")
    refused = platform.cli("tools", "export", "--format", "mcp", "--strict")

    read = next(tool["function"] for tool in strict if tool["function"]["name"] == "read")
    assert read["strict"] is True
    assert read["parameters"]["required"] == ["file_path", "offset", "limit"]
    assert read["parameters"]["properties"]["offset"]["type"] == ["integer", "null"]
    assert anthropic.status_code == 422
    assert "strict applies to the openai format only" in anthropic.text
    assert cli.returncode == 0, cli.stderr
    assert next(t for t in json.loads(cli.stdout) if t["function"]["name"] == "read") == {
        "type": "function",
        "function": read,
    }
    assert refused.returncode == 2
    assert "strict applies to the openai format only" in refused.stderr


def test_a_models_calls_reach_dotted_tools_and_leave_strict_nulls_out(
    platform: Platform, api: httpx.Client
) -> None:
    imported = platform.cli("mcp", "import", "--name", "fc", "--", sys.executable, ECHO_SERVER)
    assert imported.returncode == 0, imported.stderr
    wait_for(lambda: api.get("/v1/tools/fc.say_hello").status_code == 200, 30, "the import")
    response = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "function": {"name": "fc_say_hello", "arguments": '{"name": "Ada"}'},
            },
            {
                "id": "c2",
                "function": {
                    "name": "read",
                    "arguments": '{"file_path": "hello.txt", "offset": null, "limit": null}',
                },
            },
        ],
    }
    try:
        with Client(platform.base_url, token=platform.token) as client:
            hello, read = client.run_tool_calls(response)
    finally:
        platform.cli("mcp", "remove", "fc")

    assert json.loads(hello["content"]) == {"greeting": "Hello, Ada!"}
    assert "hello from the workspace" in read["content"]

"""The SDK (sync and async) and `toolrun call` against the running platform."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.integration.platform import Platform
from toolrun.client import ApiError, AsyncClient, Client
from toolrun.tools.model import ToolStatus


def test_client_lists_gets_and_calls(platform: Platform) -> None:
    with Client(platform.base_url, token=platform.token) as client:
        names = {tool.name for tool in client.list_tools()}
        assert {"read", "write", "edit", "glob", "grep", "bash"} <= names
        assert client.get_tool("grep").permission == "read_only"

        result = client.call("read", {"file_path": "hello.txt"}, wait=30)
        assert result.status is ToolStatus.SUCCESS
        assert client.get_call(result.call_id).status is ToolStatus.SUCCESS

        queued = client.call("read", {"file_path": "hello.txt"}, wait=0)
        assert queued.status in {ToolStatus.QUEUED, ToolStatus.RUNNING, ToolStatus.SUCCESS}


def test_client_raises_api_errors_with_the_servers_message(platform: Platform) -> None:
    with (
        Client(platform.base_url, token=platform.token) as client,
        pytest.raises(ApiError) as caught,
    ):
        client.call("read", {"limit": 3})
    assert caught.value.status_code == 422
    assert caught.value.detail == "invalid arguments: missing required parameter: file_path"


def test_async_client(platform: Platform) -> None:
    async def scenario() -> list[ToolStatus]:
        async with AsyncClient(platform.base_url, token=platform.token) as client:
            calls = [client.call("read", {"file_path": "hello.txt"}) for _ in range(5)]
            return [result.status for result in await asyncio.gather(*calls)]

    assert asyncio.run(scenario()) == [ToolStatus.SUCCESS] * 5


def test_cli_call_goes_through_the_api_by_default(platform: Platform) -> None:
    done = platform.cli("call", "read", "--args", '{"file_path": "hello.txt"}', "--json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "success"
    assert result["metadata"]["worker"].startswith("read_only@")


def test_cli_call_reports_a_refusal_with_exit_1(platform: Platform) -> None:
    done = platform.cli("call", "nope")

    assert done.returncode == 1
    assert "refused (404): unknown tool: nope" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


def test_cli_without_a_token_says_how_to_get_one(platform: Platform, tmp_path: Path) -> None:
    done = platform.cli("call", "read", "--args", "{}", home=tmp_path)

    assert done.returncode == 2
    assert "the API refused the token (missing bearer token" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr

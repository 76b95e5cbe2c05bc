"""The SDK (sync and async) and `toolrun call` against the running platform."""

from __future__ import annotations

import asyncio
import json
import re
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
    said = " ".join(done.stderr.split())
    assert f"used: home {tmp_path}; API {platform.base_url}; token none" in said


def test_cli_manages_agents_through_the_running_platform(
    platform: Platform, tmp_path: Path
) -> None:
    # The CLI's home holds the admin token and no database of the platform's: a change
    # made on a database directly would not reach the platform.
    (tmp_path / "admin.token").write_text(platform.token)

    unknown = platform.cli(
        "agents", "create", "bot", "--ceiling", "read_only", "--tools", "read,gerp", home=tmp_path
    )
    assert unknown.returncode == 2
    assert "names no registered tool or tag: gerp (did you mean grep?)" in unknown.stderr

    created = platform.cli(
        "agents", "create", "bot", "--ceiling", "read_only", "--tools", "read,grep", home=tmp_path
    )
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    with Client(platform.base_url, token=token) as bot:
        assert bot.whoami()["name"] == "bot"
    assert not (tmp_path / "toolrun.db").exists()

    listed = platform.cli("agents", "list", "--json", home=tmp_path)
    [shown] = [agent for agent in json.loads(listed.stdout) if agent["name"] == "bot"]
    assert shown["tools"] == ["grep", "read"]

    again = platform.cli("agents", "create", "bot", "--ceiling", "read_only", home=tmp_path)
    assert again.returncode == 2
    assert "an agent named 'bot' already exists" in again.stderr

    assert platform.cli("agents", "revoke", "bot", home=tmp_path).returncode == 0
    with Client(platform.base_url, token=token) as bot, pytest.raises(ApiError) as refused:
        bot.whoami()
    assert refused.value.status_code == 401


def test_cli_shows_a_call_by_its_id_and_a_pending_one_is_no_failure(
    platform: Platform,
) -> None:
    body = json.dumps({"command": "rm -rf build"})  # dangerous: an operator decides
    parked = platform.cli("call", "bash", "--args", body, "--wait", "0")

    assert parked.returncode == 3, parked.stderr  # not ended: no tool failure
    said = " ".join(parked.stderr.split())
    assert "awaiting approval" in said
    [call_id] = re.findall(r"toolrun calls show (\w+) --wait 60", said)[:1]
    shown = platform.cli("calls", "show", call_id, "--json")
    assert shown.returncode == 3
    assert json.loads(shown.stdout)["status"] == "awaiting_approval"

    done = platform.cli("call", "read", "--args", '{"file_path": "hello.txt"}', "--json")
    read_id = json.loads(done.stdout)["call_id"]
    again = platform.cli("calls", "show", read_id, "--wait", "5")
    assert again.returncode == 0, again.stderr
    assert " ".join(again.stderr.split()).startswith("success read 1.0.0")
    assert read_id in again.stderr

    missing = platform.cli("calls", "show", "no-such-call")
    assert missing.returncode == 1
    assert "refused (404)" in " ".join(missing.stderr.split())

"""GET /v1/calls and `toolrun calls list` on a real platform (Redis, API, an execute worker
of two slots, nothing handed out ahead): calls queued, running and awaiting approval are
listed, newest first, each agent seeing its own, and leave the list when they end."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from tests.integration.platform import Platform, apart, wait_for
from toolrun.calls import keys
from toolrun.permissions.levels import PermissionLevel

SLEEP = {"command": "sleep 5"}  # long enough to be seen running, and one to wait behind


@pytest.fixture(scope="module")
def busy(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """A platform of its own: one execute worker (two slots), and `read` parked for
    approval (no worker runs it)."""
    env = {"TOOLRUN_DISPATCH_AHEAD": "0", "TOOLRUN_TOOL_POLICIES": '{"read": "confirm"}'}
    root = tmp_path_factory.mktemp("open-calls")
    with apart(redis_url, 7, root, levels=(PermissionLevel.EXECUTE,), extra_env=env) as up:
        yield up


def client(platform: Platform, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=platform.base_url, headers=headers, timeout=60)


def submit(api: httpx.Client, tool: str, arguments: dict[str, Any]) -> str:
    response = api.post("/v1/calls", json={"tool_name": tool, "arguments": arguments})
    assert response.status_code == 202, response.text
    return str(response.json()["call_id"])


def statuses(api: httpx.Client, **query: Any) -> dict[str, str]:
    response = api.get("/v1/calls", params=query)
    assert response.status_code == 200, response.text
    return {call["call_id"]: call["status"] for call in response.json()}


def test_open_calls_are_listed_until_they_end(busy: Platform) -> None:
    admin = client(busy, busy.token)
    agent = client(busy, busy.agent("lister", PermissionLevel.EXECUTE))
    with admin, agent:
        sleepers = [submit(agent, "bash", SLEEP) for _ in range(3)]
        parked = submit(admin, "read", {"file_path": "a.txt"})
        wait_for(
            lambda: (
                sorted(statuses(admin, agent="lister").values()) == ["queued", *["running"] * 2]
            ),
            30,
            "two calls running and one queued",
        )
        # A quota's recheck notes the open calls again at its time (their scores in the
        # agent's set): the oldest call's score made the newest must not reorder the list.
        lister = admin.get("/v1/agents/lister").json()["id"]
        redis.Redis.from_url(busy.redis_url).zadd(
            keys.agent_open(lister), {sleepers[0]: time.time() + 3600}
        )
        listed = admin.get("/v1/calls").json()
        by_status = {s: set(statuses(admin, status=s)) for s in ("queued", "running")}
        parked_only = statuses(admin, status="awaiting_approval")
        own = statuses(agent)
        unknown = admin.get("/v1/calls", params={"agent": "nobody"})
        anonymous = httpx.get(f"{busy.base_url}/v1/calls", timeout=60)
        prefix = sleepers[2][:12]
        cli_list = busy.cli("calls", "list")
        cli_json = busy.cli("calls", "list", "--status", "awaiting_approval", "--json")
        cli_show = busy.cli("calls", "show", prefix, "--json")

        assert {call["call_id"] for call in listed} == {*sleepers, parked}
        assert listed[0]["call_id"] == parked  # newest first
        queued_at = [call["metadata"]["queued_at"] for call in listed]
        assert queued_at == sorted(queued_at, reverse=True)
        assert {call["agent_name"] for call in listed} == {"lister", "admin"}
        assert len(by_status["running"]) == 2
        assert by_status["queued"] | by_status["running"] == set(sleepers)
        assert parked_only == {parked: "awaiting_approval"}
        assert set(own) == set(sleepers)  # an agent sees its own calls only
        assert unknown.status_code == 404
        assert anonymous.status_code == 401
        assert cli_list.returncode == 0, cli_list.stderr
        for call_id in [*sleepers, parked]:
            assert call_id in cli_list.stdout
        assert "awaiting_approval" in cli_list.stdout
        assert [call["call_id"] for call in json.loads(cli_json.stdout)] == [parked]
        assert cli_show.returncode in (0, 3), cli_show.stderr  # 3: not ended yet
        assert json.loads(cli_show.stdout)["call_id"] == sleepers[2]

        for call_id in sleepers:
            ended = admin.get(f"/v1/calls/{call_id}", params={"wait": 60}).json()
            assert ended["status"] == "success", ended
        assert admin.post(f"/v1/calls/{parked}/deny", json={}).status_code == 200
        emptied = busy.cli("calls", "list")

        assert statuses(admin) == {}
        assert emptied.returncode == 0
        assert "No call is queued, running or awaiting approval." in emptied.stderr

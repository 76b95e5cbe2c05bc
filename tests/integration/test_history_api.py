"""GET /v1/history and `toolrun history` on the running platform."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.integration.platform import Platform, wait_for
from toolrun.permissions.levels import PermissionLevel


def client_for(platform: Platform, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=platform.base_url, headers=headers, timeout=60)


def rows(api: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = api.get("/v1/history", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["rows"])


def test_calls_are_recorded_by_the_workers_and_the_api(
    platform: Platform, api: httpx.Client
) -> None:
    token = platform.agent("historian", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        ids = [
            agent.post(
                "/v1/calls",
                params={"wait": 30},
                json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}},
            ).json()["call_id"]
            for _ in range(3)
        ]
        blocked = agent.post(
            "/v1/calls", json={"tool_name": "write", "arguments": {"file_path": "x", "content": ""}}
        ).json()

    wait_for(lambda: len(rows(api, agent="historian")) == 4, 30, "four history rows")
    recorded = rows(api, agent="historian")
    newest_reads = rows(api, agent="historian", tool="read", limit=2)

    assert [r["call_id"] for r in newest_reads] == ids[::-1][:2]
    read = newest_reads[0]
    assert read["status"] == "success"
    assert read["worker"].startswith("read_only@")
    assert read["cpu_s"] is not None
    assert read["queue_wait_ms"] is not None
    assert read["output_bytes"] > 0
    assert read["arguments"] == {"file_path": "hello.txt"}
    [refused] = [r for r in recorded if r["status"] == "blocked"]
    assert refused["call_id"] == blocked["call_id"]
    assert refused["error"] == "agent may not call this tool (needs read_write, has read_only)"
    assert refused["worker"] is None  # the API stopped it


def test_failures_carry_their_type(platform: Platform, api: httpx.Client) -> None:
    token = platform.agent("failer", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        agent.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "read", "arguments": {"file_path": "missing.txt"}},
        )

    wait_for(lambda: rows(api, agent="failer"), 30, "the failed call's row")
    [failed] = rows(api, agent="failer", status="error")
    assert failed["error_type"] == "ToolExecutionError"
    assert "missing.txt" in failed["error"]


def test_an_agent_sees_only_its_own_history(platform: Platform, api: httpx.Client) -> None:
    token = platform.agent("private", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        agent.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}},
        )
        wait_for(lambda: rows(agent), 30, "its row")
        mine = rows(agent, limit=1000)
        asked_for_others = rows(agent, agent="admin", limit=1000)

    me = api.get("/v1/agents").json()
    private_id = next(a["id"] for a in me if a["name"] == "private")
    assert {r["agent_id"] for r in mine} == {private_id}
    assert {r["agent_id"] for r in asked_for_others} == {private_id}


def test_pages_and_bad_queries(api: httpx.Client) -> None:
    first = api.get("/v1/history", params={"limit": 2}).json()
    second = api.get("/v1/history", params={"limit": 2, "cursor": first["next_cursor"]}).json()

    assert not {r["call_id"] for r in first["rows"]} & {r["call_id"] for r in second["rows"]}
    assert api.get("/v1/history", params={"cursor": "junk"}).status_code == 422
    assert api.get("/v1/history", params={"agent": "nobody-here"}).status_code == 404
    assert api.get("/v1/history", params={"status": "bogus"}).status_code == 422
    assert api.get("/v1/history", params={"limit": 0}).status_code == 422


def test_the_cli_lists_recent_calls(platform: Platform) -> None:
    done = platform.cli("history", "--tool", "read", "--limit", "3", "--json")
    table = platform.cli("history", "--limit", "5")

    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert 0 < len(listed) <= 3
    assert {r["tool_name"] for r in listed} == {"read"}
    assert table.returncode == 0, table.stderr
    assert "status" in table.stdout

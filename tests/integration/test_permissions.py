"""Agent ceilings, tool sets and pins through the API, with real workers behind it."""

from __future__ import annotations

import itertools
from pathlib import Path

import httpx
import pytest
import redis

from tests.integration.platform import Platform
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

LEVELS = list(PermissionLevel)


@pytest.fixture(scope="module")
def ceilings(platform: Platform) -> dict[PermissionLevel, str]:
    """One agent per ceiling: level → token."""
    return {level: platform.agent(f"matrix-{level}", level) for level in LEVELS}


def as_agent(platform: Platform, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=platform.base_url, headers=headers, timeout=60)


@pytest.mark.parametrize(("tool_level", "ceiling"), list(itertools.product(LEVELS, LEVELS)))
def test_permission_matrix(
    platform: Platform,
    platform_workspace: Path,
    ceilings: dict[PermissionLevel, str],
    redis_client: redis.Redis,
    tool_level: PermissionLevel,
    ceiling: PermissionLevel,
) -> None:
    marker = f"ran-{tool_level}-under-{ceiling}"
    with as_agent(platform, ceilings[ceiling]) as client:
        response = client.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": f"probe_{tool_level}", "arguments": {"pid_file": marker}},
        )

    result = response.json()
    assert response.status_code == 200, result
    if ceiling.allows(tool_level):
        assert result["status"] == "success", result
        assert result["metadata"]["worker"].startswith(f"{tool_level}@")
        assert (platform_workspace / marker).exists()
    else:
        assert result["status"] == "blocked"
        assert result["error"] == (
            f"agent may not call this tool (needs {tool_level}, has {ceiling})"
        )
        assert "worker" not in result["metadata"]  # decided by the API, never enqueued
        assert not redis_client.exists(f"toolrun:deliveries:{result['call_id']}")
        assert not (platform_workspace / marker).exists()


def test_the_explore_agent_is_blocked_from_write(platform: Platform) -> None:
    """The spec's read-only Explore agent: it may read and search, never write."""
    token = platform.agent("explore", PermissionLevel.READ_ONLY, tools=["read", "grep", "glob"])
    with as_agent(platform, token) as client:
        wrote = client.post(
            "/v1/calls", json={"tool_name": "write", "arguments": {"file_path": "x", "content": ""}}
        ).json()
        read = client.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}},
        ).json()
        events = httpx.get(
            f"{platform.base_url}/v1/security-events",
            params={"kind": "blocked_call"},
            headers=platform.headers,
        ).json()

    assert wrote["status"] == "blocked"
    assert wrote["error"] == "agent may not call this tool (needs read_write, has read_only)"
    assert read["status"] == "success"
    assert any(e["call_id"] == wrote["call_id"] for e in events)


def test_a_tool_outside_the_tool_set_is_blocked(platform: Platform) -> None:
    token = platform.agent("lister", PermissionLevel.EXECUTE, tools=["glob"])
    with as_agent(platform, token) as client:
        result = client.post(
            "/v1/calls", json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}}
        ).json()

    assert result["status"] == "blocked"
    assert result["error"] == "tool read is not in the tool set of agent lister"


def test_an_agent_sees_only_its_tool_set(platform: Platform) -> None:
    token = platform.agent(
        "searcher", PermissionLevel.EXECUTE, tools=["tag:search", "tag:filesystem"]
    )
    with as_agent(platform, token) as client:
        names = {tool["name"] for tool in client.get("/v1/tools").json()}
        hidden = client.get("/v1/tools/bash")

    assert names == {"read", "write", "edit", "glob", "grep", "search"}  # by tags
    assert hidden.status_code == 404


def test_a_version_pin_chooses_and_limits_the_version(platform: Platform) -> None:
    token = platform.agent("pinned", PermissionLevel.READ_ONLY, pins=["read@^2"])
    with as_agent(platform, token) as client:
        result = client.post(
            "/v1/calls", json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}}
        )
        exact = client.post(
            "/v1/calls",
            json={"tool_name": "read", "version": "1.0.0", "arguments": {"file_path": "hello.txt"}},
        ).json()

    assert result.status_code == 404  # no read 2.x exists
    assert result.json()["detail"].startswith("unknown tool: read@^2")
    assert exact["status"] == "blocked"
    assert exact["error"] == "agent pinned is pinned to read@^2"


def test_an_agent_sees_only_its_own_calls(platform: Platform) -> None:
    first = platform.agent("first", PermissionLevel.READ_ONLY)
    second = platform.agent("second", PermissionLevel.READ_ONLY)
    with as_agent(platform, first) as client:
        call_id = client.post(
            "/v1/calls", json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}}
        ).json()["call_id"]
    with as_agent(platform, second) as client:
        assert client.get(f"/v1/calls/{call_id}").status_code == 404
    with as_agent(platform, first) as client:
        assert client.get(f"/v1/calls/{call_id}").status_code in {200, 202}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/calls/any-call/approve", {}),
        ("POST", "/v1/calls/any-call/deny", {}),
        ("GET", "/v1/approvals", None),
        ("POST", "/v1/approval-rules", {"tool_name": "bash"}),
        ("POST", "/v1/agents", {"name": "mine", "ceiling": "admin", "role": "admin"}),
        ("DELETE", "/v1/agents/admin", None),
        ("GET", "/v1/agents", None),
        ("GET", "/v1/security-events", None),
    ],
)
def test_an_agent_can_never_approve_administer_or_raise_itself(
    platform: Platform, ceilings: dict[PermissionLevel, str], method: str, path: str, body: object
) -> None:
    with as_agent(platform, ceilings[PermissionLevel.ADMIN]) as client:  # even the top ceiling
        response = client.request(method, path, json=body)
        me = client.get("/v1/agents/me").json()

    assert response.status_code == 403
    assert "needs the" in response.json()["detail"]
    assert me["role"] == "agent"


def test_an_operator_may_approve_but_not_administer(platform: Platform) -> None:
    token = platform.agent("ops", PermissionLevel.READ_ONLY, Role.OPERATOR)
    with as_agent(platform, token) as client:
        assert client.get("/v1/approvals").status_code == 200
        assert client.get("/v1/agents").status_code == 403


def test_a_revoked_token_stops_working(platform: Platform) -> None:
    token = platform.agent("shortlived", PermissionLevel.READ_ONLY)
    admin = httpx.Client(base_url=platform.base_url, headers=platform.headers, timeout=30)
    with admin, as_agent(platform, token) as client:
        assert client.get("/v1/agents/me").status_code == 200
        assert admin.delete("/v1/agents/shortlived").status_code == 204
        assert client.get("/v1/agents/me").status_code == 401

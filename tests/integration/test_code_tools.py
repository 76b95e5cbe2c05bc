"""The code tools (git, search, lsp) through the API, on real workers."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.integration.platform import Platform
from toolrun.permissions.levels import PermissionLevel
from toolrun.terminal.client import HostClient
from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket

GIT = shutil.which("git") or "git"


def call(api: httpx.Client, tool: str, **arguments: Any) -> dict[str, Any]:
    response = api.post(
        "/v1/calls", params={"wait": 30}, json={"tool_name": tool, "arguments": arguments}
    )
    assert response.status_code in (200, 202), response.text
    result: dict[str, Any] = response.json()
    return result


def test_commit_on_a_read_write_worker_then_log_on_a_read_only_one(
    platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    repo = f"repo-{uuid.uuid4().hex[:8]}"
    (platform_workspace / repo).mkdir()
    subprocess.run([GIT, "init", "-q", "-b", "main"], cwd=platform_workspace / repo, check=True)
    (platform_workspace / repo / "notes.md").write_text("# Notes\n")

    added = call(api, "git_add", repo=repo, paths=[f"{repo}/notes.md"])
    made = call(api, "git_commit", repo=repo, message="Add notes", author="Ann <ann@x.org>")
    log = call(api, "git_log", repo=repo)

    assert added["status"] == "success", added
    assert made["status"] == "success", made
    assert made["metadata"]["worker"].startswith("read_write@")
    assert log["metadata"]["worker"].startswith("read_only@")
    (commit,) = log["output"]["commits"]
    assert (commit["subject"], commit["author_name"]) == ("Add notes", "Ann")
    status = call(api, "git_status", repo=repo)
    assert status["output"]["clean"] is True


def test_an_injected_ref_is_blocked_and_an_admin_tool_waits_for_an_operator(
    platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    repo = f"repo-{uuid.uuid4().hex[:8]}"
    (platform_workspace / repo).mkdir()
    subprocess.run([GIT, "init", "-q"], cwd=platform_workspace / repo, check=True)

    injected = call(api, "git_log", repo=repo, revision="--output=/tmp/pwned")
    assert injected["status"] == "blocked"
    assert "would be read as an option" in injected["error"]

    reset = call(api, "git_reset", repo=repo, mode="hard")  # dangerous despite auto-approve
    assert reset["status"] == "awaiting_approval"
    denied = api.post(f"/v1/calls/{reset['call_id']}/deny", json={"reason": "not today"})
    assert denied.status_code == 200


def test_search_and_lsp_on_a_read_only_worker(
    platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    package = f"pkg_{uuid.uuid4().hex[:8]}"
    (platform_workspace / package).mkdir()
    (platform_workspace / package / "__init__.py").write_text("")
    (platform_workspace / package / "limits.py").write_text(
        'class TokenBucketLimiter:\n    """Rate limiting with a token bucket."""\n\n\n'
        "def build_limiter() -> TokenBucketLimiter:\n    return TokenBucketLimiter()\n"
    )

    found = call(api, "search", query="token bucket rate limiter", path=package)
    assert found["status"] == "success", found
    assert found["metadata"]["worker"].startswith("read_only@")
    first = found["output"]["results"][0]
    assert (first["path"], first["symbol"]) == (f"{package}/limits.py", "TokenBucketLimiter")

    arguments = {"file_path": f"{package}/limits.py", "symbol": "TokenBucketLimiter", "line": 5}
    defined = call(api, "lsp", operation="definition", **arguments)
    assert defined["status"] == "success", defined
    assert [place["location"] for place in defined["output"]["locations"]] == [
        f"{package}/limits.py:1:7"
    ]


def test_a_terminal_session_is_driven_through_the_api_by_any_worker_process(
    platform: Platform, api: httpx.Client
) -> None:
    """Whichever of the execute worker's processes takes a call reaches the session."""
    opened = call(api, "terminal", operation="open", command="python3 -q")
    assert opened["status"] == "success", opened
    session = opened["output"]["session"]
    for value in range(4):
        sent = call(api, "terminal", operation="send", session=session, text=f"{value}*7\r")
        waited = call(
            api, "terminal", operation="wait_for", session=session, pattern=f"^{value * 7}$"
        )
        assert sent["status"] == "success", sent
        assert waited["output"]["matched"], waited

    closed = call(api, "terminal", operation="close", session=session)
    assert closed["status"] == "success"
    lost = call(api, "terminal", operation="read", session=session)
    assert lost["error"] == f"terminal session {session} is lost: it was closed; open a new one"
    stop_terminal_host(platform)


def stop_terminal_host(platform: Platform) -> None:
    """The machine's terminal host outlives the workers (until idle): stop it now."""
    assert HostClient(host_socket(platform.settings), idle_s=HOST_IDLE_S).stop()


def test_another_agent_cannot_drive_a_session(platform: Platform) -> None:
    tokens = [
        platform.agent(f"{name}-{uuid.uuid4().hex[:6]}", PermissionLevel.EXECUTE)
        for name in ("owner", "other")
    ]
    owner, other = (
        httpx.Client(
            base_url=platform.base_url, timeout=60, headers={"Authorization": f"Bearer {t}"}
        )
        for t in tokens
    )
    with owner, other:
        opened = call(owner, "terminal", operation="open", command="python3 -q")
        assert opened["status"] == "success", opened
        session = opened["output"]["session"]

        stolen = call(other, "terminal", operation="read", session=session)
        mine = call(owner, "terminal", operation="read", session=session)
        call(owner, "terminal", operation="close", session=session)

    assert stolen["status"] == "error"
    assert f"terminal session {session} is lost" in stolen["error"]
    assert mine["status"] == "success", mine
    stop_terminal_host(platform)

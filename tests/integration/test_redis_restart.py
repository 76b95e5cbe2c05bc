"""A Redis restart under the running platform: unhealthy, then healthy again by itself."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.integration.platform import Platform, running, wait_for
from toolrun.embedded import RedisServer
from toolrun.permissions.levels import PermissionLevel


def health(platform: Platform) -> int:
    return httpx.get(f"{platform.base_url}/healthz", timeout=5).status_code


def test_platform_recovers_after_redis_restarts(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("after the restart\n")
    platform = Platform(
        server.url, workspace, tmp_path / "logs", levels=(PermissionLevel.READ_ONLY,)
    )
    try:
        with running(platform):
            assert health(platform) == 200

            server.stop()
            wait_for(lambda: health(platform) == 503, 30, "the API to report Redis down")
            body = httpx.get(f"{platform.base_url}/healthz", timeout=5).json()
            assert body["status"] == "unhealthy"
            assert body["redis"].startswith("unavailable")

            server.start()  # same port and data directory
            wait_for(lambda: health(platform) == 200, 60, "the API to recover")
            response = httpx.post(
                f"{platform.base_url}/v1/calls",
                params={"wait": 60},
                json={"tool_name": "read", "arguments": {"file_path": "a.txt"}},
                timeout=70,
            )
            assert response.status_code == 200, response.text
            assert response.json()["output"]["content"] == "     1\tafter the restart"
    finally:
        server.stop()


def test_a_call_running_while_redis_restarts_still_ends(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    platform = Platform(
        server.url, workspace, tmp_path / "logs", levels=(PermissionLevel.READ_ONLY,)
    )
    try:
        with running(platform):
            queued = httpx.post(
                f"{platform.base_url}/v1/calls",
                json={"tool_name": "sleepy", "arguments": {"seconds": 1.5, "pid_file": "pid"}},
                timeout=10,
            ).json()
            wait_for((workspace / "pid").exists, 30, "the call to start")

            server.stop()  # down across the call's end: its result cannot be stored then
            time.sleep(3)  # a fault's duration, not a wait for an event
            server.start()

            def final() -> bool:
                response = httpx.get(f"{platform.base_url}/v1/calls/{queued['call_id']}")
                return response.json()["status"] not in {"queued", "running"}

            wait_for(final, 120, "the call to end after the restart")
            result = httpx.get(f"{platform.base_url}/v1/calls/{queued['call_id']}").json()
            assert result["status"] == "success", result
    finally:
        server.stop()

"""A Redis restart under the running platform: unhealthy, then healthy again by itself."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.integration.platform import Platform, running, wait_for
from toolrun.embedded import RedisServer
from toolrun.permissions.levels import PermissionLevel


@dataclass
class Setup:
    server: RedisServer
    platform: Platform
    workspace: Path


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    """A private Redis (this test stops it) under an API and a read_only worker."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    platform = Platform(
        server.url, workspace, tmp_path / "logs", levels=(PermissionLevel.READ_ONLY,)
    )
    try:
        with running(platform):
            yield Setup(server, platform, workspace)
    finally:
        server.stop()


def health(platform: Platform) -> int:
    return httpx.get(f"{platform.base_url}/healthz", timeout=5).status_code


def test_platform_recovers_after_redis_restarts(setup: Setup) -> None:
    platform = setup.platform
    (setup.workspace / "a.txt").write_text("after the restart\n")
    assert health(platform) == 200

    setup.server.stop()
    wait_for(lambda: health(platform) == 503, 30, "the API to report Redis down")
    body = httpx.get(f"{platform.base_url}/healthz", timeout=5).json()
    assert body["status"] == "unhealthy"
    assert body["redis"].startswith("unavailable")

    setup.server.start()  # same port and data directory
    wait_for(lambda: health(platform) == 200, 60, "the API to recover")
    response = httpx.post(
        f"{platform.base_url}/v1/calls",
        params={"wait": 60},
        json={"tool_name": "read", "arguments": {"file_path": "a.txt"}},
        timeout=70,
        headers=platform.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["output"]["content"] == "     1\tafter the restart"


def test_a_call_running_while_redis_restarts_still_ends(setup: Setup) -> None:
    base = setup.platform.base_url
    queued = httpx.post(
        f"{base}/v1/calls",
        json={"tool_name": "sleepy", "arguments": {"seconds": 1.5, "pid_file": "pid"}},
        timeout=10,
        headers=setup.platform.headers,
    ).json()
    wait_for((setup.workspace / "pid").exists, 30, "the call to start")

    setup.server.stop()  # down across the call's end: its result cannot be stored then
    time.sleep(3)  # a fault's duration, not a wait for an event
    setup.server.start()

    def final() -> bool:
        status = httpx.get(
            f"{base}/v1/calls/{queued['call_id']}", headers=setup.platform.headers
        ).json()["status"]
        return status not in {"queued", "running"}

    wait_for(final, 120, "the call to end after the restart")
    result = httpx.get(
        f"{base}/v1/calls/{queued['call_id']}", headers=setup.platform.headers
    ).json()
    assert result["status"] == "success", result

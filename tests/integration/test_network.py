"""Network confinement on the platform: bash gets no network but the allowlisting proxy,
refusals land in the security log, /healthz says how workers isolate."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.integration.platform import Platform, running
from toolrun.permissions.levels import PermissionLevel

BODY = b"served on the host's loopback\n"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(BODY)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    """A local HTTP server on the host's 127.0.0.1 (the allowed target)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def bash(api: httpx.Client, command: str) -> dict[str, Any]:
    body = {"tool_name": "bash", "arguments": {"command": command}}
    return dict(api.post("/v1/calls", params={"wait": 60}, json=body).json())


def network_events(api: httpx.Client, call_id: str) -> list[dict[str, Any]]:
    events = api.get("/v1/security-events", params={"kind": "network"}).json()
    return [event for event in events if event["call_id"] == call_id]


def test_an_allowed_host_is_reached_through_the_proxy(api: httpx.Client, port: int) -> None:
    result = bash(api, f"curl -sSf http://127.0.0.1:{port}/data")

    assert result["status"] == "success", result
    assert result["output"]["stdout"] == BODY.decode().rstrip("\n")


def test_a_refused_host_is_blocked_and_logged(api: httpx.Client, port: int) -> None:
    result = bash(api, f"curl -sSf http://localhost:{port}/data")

    assert result["status"] == "error"
    assert "403" in result["output"]["stderr"]
    [event] = network_events(api, result["call_id"])
    assert event["target"] == f"localhost:{port}"
    assert event["reason"] == "host not in network allowlist"
    assert event["tool_name"] == "bash"
    assert event["agent_id"] == result["metadata"]["agent_id"]


def test_https_to_a_refused_host_is_blocked_and_logged(api: httpx.Client) -> None:
    result = bash(api, "curl -sSf https://pypi.org/simple/")

    assert result["status"] == "error"
    [event] = network_events(api, result["call_id"])
    assert event["target"] == "pypi.org:443"


@pytest.mark.parametrize(
    "command",
    [
        "curl -sSf --noproxy '*' http://127.0.0.1:{port}/data",  # around the proxy
        "env -u http_proxy -u HTTP_PROXY -u all_proxy -u ALL_PROXY curl -sSf http://127.0.0.1:{port}/data",
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'",
    ],
)
def test_nothing_reaches_the_host_around_the_proxy(
    api: httpx.Client, port: int, command: str
) -> None:
    result = bash(api, command.format(port=port))

    assert result["status"] in {"error", "blocked"}, result
    assert BODY.decode().strip() not in str(result["output"])


def test_http_fetch_is_held_to_the_allowlist(api: httpx.Client, port: int) -> None:
    def fetch(url: str) -> dict[str, Any]:
        body = {"tool_name": "http_fetch", "arguments": {"url": url}}
        return dict(api.post("/v1/calls", params={"wait": 30}, json=body).json())

    allowed = fetch(f"http://127.0.0.1:{port}/data")
    refused = fetch(f"http://localhost:{port}/data")

    assert allowed["status"] == "success"
    assert allowed["output"]["content"] == BODY.decode()
    assert refused["status"] == "blocked"
    assert refused["error"] == "host not in network allowlist: localhost"
    [event] = network_events(api, refused["call_id"])
    assert event["target"] == "localhost"


def test_health_reports_isolated_workers(api: httpx.Client) -> None:
    health = api.get("/healthz").json()

    assert health["network"] == "isolated"
    assert health["filesystem"] == "isolated (namespaces+landlock+seccomp)"


def test_health_reports_a_worker_without_isolation(
    redis_url: str, platform_workspace: Path, tmp_path: Path
) -> None:
    own_url = redis_url.rsplit("/", 1)[0] + "/13"
    redis.Redis.from_url(own_url).flushdb()
    setup = Platform(
        own_url,
        platform_workspace,
        tmp_path,
        extra_env={"TOOLRUN_NETWORK_ISOLATION": "off", "TOOLRUN_FS_ISOLATION": "off"},
        levels=(PermissionLevel.READ_ONLY,),
    )
    with running(setup):
        health = httpx.get(f"{setup.base_url}/healthz", timeout=10).json()
        log = (tmp_path / "worker-read_only.log").read_text()

    network, filesystem = health["network"], health["filesystem"]
    assert network.startswith("read_only@")  # read_only@<host>/<pid>
    assert network.endswith("degraded: turned off (TOOLRUN_NETWORK_ISOLATION=off)")
    assert filesystem.startswith("read_only@")
    assert filesystem.endswith("degraded: turned off (TOOLRUN_FS_ISOLATION=off)")
    assert "network: degraded: turned off (TOOLRUN_NETWORK_ISOLATION=off)" in log
    assert "filesystem: degraded: turned off (TOOLRUN_FS_ISOLATION=off)" in log

"""http_fetch: allowlisted hosts only (redirects included), size and time limits."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolrun.config import Settings
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, ToolStatus

BODY = "héllo from the test server\n".encode()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(3)
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", self.path.partition("to=")[2])
            self.end_headers()
            return
        data = BODY * (10_000 if self.path == "/big" else 1)
        self.send_response(404 if self.path == "/missing" else 200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a cut-off client
            self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def fetch(workspace: Path, allow: list[str], **arguments: Any) -> ToolResult:
    settings = Settings(workspace=workspace, network_allowlist=allow)
    call = ToolCall(tool_name="http_fetch", arguments=arguments)
    return Executor(ToolRegistry.with_builtins()).execute(call, ToolContext.create(settings))


def test_an_allowed_host_is_fetched(workspace: Path, server: str) -> None:
    result = fetch(workspace, ["127.0.0.1"], url=f"{server}/hello")

    assert result.status is ToolStatus.SUCCESS, result.error
    assert result.output["content"] == BODY.decode()
    assert result.output["status_code"] == 200
    assert result.output["truncated"] is False


def test_an_error_status_is_a_result(workspace: Path, server: str) -> None:
    result = fetch(workspace, ["127.0.0.1"], url=f"{server}/missing")

    assert result.status is ToolStatus.SUCCESS
    assert result.output["status_code"] == 404


@pytest.mark.parametrize(
    ("allow", "host"),
    [
        ([], "127.0.0.1"),
        (["localhost"], "127.0.0.1"),
        (["example.com"], "127.0.0.1"),
        (["127.0.0.2"], "127.0.0.1"),
    ],
)
def test_a_host_off_the_allowlist_is_blocked(
    workspace: Path, server: str, allow: list[str], host: str
) -> None:
    result = fetch(workspace, allow, url=f"{server}/hello")

    assert result.status is ToolStatus.BLOCKED
    assert result.error == f"host not in network allowlist: {host}"
    assert result.metadata["blocked_target"] == host
    assert result.metadata["blocked_network"] is True


def test_a_redirect_to_a_refused_host_is_blocked(workspace: Path, server: str) -> None:
    result = fetch(
        workspace, ["127.0.0.1"], url=f"{server}/redirect?to=http://evil.example.net/steal"
    )

    assert result.status is ToolStatus.BLOCKED
    assert result.error == "host not in network allowlist: evil.example.net"


def test_a_redirect_on_an_allowed_host_is_followed(workspace: Path, server: str) -> None:
    result = fetch(workspace, ["127.0.0.1"], url=f"{server}/redirect?to=/hello")

    assert result.status is ToolStatus.SUCCESS
    assert result.output["url"] == f"{server}/hello"


def test_the_body_is_cut_at_max_bytes(workspace: Path, server: str) -> None:
    result = fetch(workspace, ["127.0.0.1"], url=f"{server}/big", max_bytes=100)

    assert result.output["truncated"] is True
    assert result.output["bytes"] == 100


def test_a_slow_server_times_out(workspace: Path, server: str) -> None:
    result = fetch(workspace, ["127.0.0.1"], url=f"{server}/slow", timeout=0.5)

    assert result.status is ToolStatus.TIMEOUT
    assert result.error == "fetch took longer than 0.5 s"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://a", "/x"])
def test_only_http_urls(workspace: Path, url: str) -> None:
    result = fetch(workspace, ["127.0.0.1"], url=url)

    assert result.status is ToolStatus.ERROR
    assert result.error == f"not an http(s) URL: {url!r}"

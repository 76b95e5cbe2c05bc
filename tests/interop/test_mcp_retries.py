"""The MCP server's API backend against an API on loopback that refuses calls with
Retry-After (429 over a quota): it sends a refused call again after that wait, and a call
still refused after its retries is a tool error that says which quota and when to try
again, driven by the official MCP client."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import cast

import anyio
import mcp_types as types
import pytest
from mcp import Client

from toolrun.interop.mcp_server import ApiBackend, McpFrontEnd

TOOLS = [{"name": "read", "inputSchema": {"type": "object"}}]
RESULT = {"call_id": "c1", "tool_name": "read", "status": "success", "output": "hello"}
OVER = "agent bot is over its quota max_in_flight: 2 calls queued or running; retry after 1 s"


class QuotaApi:
    """Serves GET /v1/tools and POST /v1/calls on 127.0.0.1: each call is answered with
    the next of `answers` (429 with Retry-After: 1, or 200 with a result), the last one
    again once they run out; `sent` notes when each call arrived."""

    def __init__(self, *answers: int) -> None:
        self.answers = list(answers)
        self.sent: list[float] = []
        self.traceparents: list[str | None] = []  # each call's traceparent header
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self) -> int:
        with self.lock:
            self.sent.append(time.monotonic())
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _handler(api: QuotaApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._reply(200, TOOLS)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            api.traceparents.append(self.headers.get("traceparent"))
            if api.answer() == 200:
                self._reply(200, RESULT)
            else:
                self._reply(429, {"detail": OVER}, {"Retry-After": "1"})

        def _reply(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def serving() -> Iterator[type[QuotaApi]]:
    """Starts each QuotaApi the test makes, and stops it afterwards."""
    started: list[QuotaApi] = []

    class Started(QuotaApi):
        def __init__(self, *answers: int) -> None:
            super().__init__(*answers)
            self.thread.start()
            started.append(self)

    yield Started
    for api in started:
        api.server.shutdown()
        api.server.server_close()


def call_read(
    backend: ApiBackend, meta: types.RequestParamsMeta | None = None
) -> types.CallToolResult:
    async def run() -> types.CallToolResult:
        async with Client(McpFrontEnd(backend).server()) as client:
            return await client.call_tool("read", {"file_path": "a.txt"}, meta=meta)

    return anyio.run(run)


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def test_a_call_refused_with_retry_after_is_sent_again_after_that_wait(
    serving: type[QuotaApi],
) -> None:
    api = serving(429, 200)

    result = call_read(ApiBackend(api.url, "token", retries=3))

    assert not result.is_error, text(result)
    assert text(result) == "hello"
    assert len(api.sent) == 2
    assert api.sent[1] - api.sent[0] >= 0.9  # Retry-After: 1 was waited out


def test_a_call_still_refused_after_its_retries_says_which_quota_and_when(
    serving: type[QuotaApi],
) -> None:
    api = serving(429)

    result = call_read(ApiBackend(api.url, "token", retries=1))

    assert result.is_error
    assert len(api.sent) == 2  # the call, and its one retry
    assert text(result) == (
        f"error: refused (429) 2 times: {OVER}. Nothing was run; try again in 1 s."
    )


def test_without_retries_a_refused_call_is_reported_at_once(serving: type[QuotaApi]) -> None:
    api = serving(429, 200)

    result = call_read(ApiBackend(api.url, "token", retries=0))

    assert result.is_error
    assert len(api.sent) == 1
    assert text(result).startswith("error: refused (429) once: agent bot is over its quota")
    assert text(result).endswith("try again in 1 s.")


def test_the_trace_context_in_meta_reaches_the_api_as_a_header(
    serving: type[QuotaApi],
) -> None:
    api = serving(200)
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    meta = cast(types.RequestParamsMeta, {"traceparent": parent})  # an open map
    traced = call_read(ApiBackend(api.url, "token"), meta)
    plain = call_read(ApiBackend(api.url, "token"))

    assert not traced.is_error, text(traced)
    assert not plain.is_error, text(plain)
    assert api.traceparents == [parent, None]


@pytest.mark.parametrize(
    "meta",
    [
        {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nX-Evil: 1"},
        {"traceparent": "00-ÿÿÿÿ-00f067aa0ba902b7-01"},
        {"traceparent": 42},
        {"tracestate": "vendor=1"},  # no traceparent to go with it
    ],
)
def test_a_malformed_trace_context_is_left_out_and_the_call_still_runs(
    serving: type[QuotaApi], meta: dict[str, object]
) -> None:
    api = serving(200)

    result = call_read(ApiBackend(api.url, "token"), cast(types.RequestParamsMeta, meta))

    assert not result.is_error, text(result)
    assert api.traceparents == [None]

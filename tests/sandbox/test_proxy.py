"""AllowlistProxy: raw clients on its unix socket, real upstream servers on 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from toolrun.sandbox.network import NetworkPolicy
from toolrun.sandbox.proxy import MAX_HEAD_BYTES, AllowlistProxy, Refusal

BODY = b"hello through the proxy\n"
NOT_ALLOWED = "host not in network allowlist"


@contextlib.contextmanager
def http_server(body: bytes = BODY) -> Iterator[int]:
    """A real HTTP server on 127.0.0.1 answering `GET /file` with `body`; its port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/file":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def raw_server(respond: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server on 127.0.0.1 handing its first connection to `respond`; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve() -> None:
        with contextlib.suppress(OSError):
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(10)
                respond(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        thread.join(timeout=15)


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
    return port


@contextlib.contextmanager
def proxy(*allowed: str, on_refused: Callable[[Refusal], None] | None = None) -> Iterator[Path]:
    refusals: list[Refusal] = []
    with AllowlistProxy(NetworkPolicy(allowed), on_refused or refusals.append) as path:
        yield path


def connect(path: Path) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.settimeout(10)
        client.connect(str(path))
    except OSError:
        client.close()
        raise
    return client


def read_to_end(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(1 << 16):
        data += chunk
    return data


def read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(1)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    return data


def exchange(path: Path, request: bytes) -> bytes:
    """Send `request` to the proxy at `path`; everything it answers until it closes."""
    with connect(path) as client:
        client.sendall(request)
        return read_to_end(client)


def test_plain_http_to_an_allowed_host_is_forwarded() -> None:
    refusals: list[Refusal] = []
    with http_server() as port, proxy("127.0.0.1", on_refused=refusals.append) as path:
        answer = exchange(path, f"GET http://127.0.0.1:{port}/file HTTP/1.1\r\n\r\n".encode())

    assert answer.startswith(b"HTTP/1.0 200 ")
    assert answer.endswith(b"\r\n\r\n" + BODY)
    assert refusals == []


def test_connect_to_an_allowed_host_is_a_byte_tunnel() -> None:
    with http_server() as port, proxy("127.0.0.1") as path, connect(path) as client:
        client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert read_head(client) == b"HTTP/1.1 200 Connection established\r\n\r\n"

        client.sendall(b"GET /file HTTP/1.0\r\n\r\n")
        answer = read_to_end(client)

    assert answer.startswith(b"HTTP/1.0 200 ")
    assert answer.endswith(BODY)


def test_request_goes_upstream_in_origin_form_without_proxy_headers() -> None:
    seen: list[bytes] = []

    def capture(connection: socket.socket) -> None:
        head = read_head(connection)
        seen.append(head + connection.recv(4))
        connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")

    request = (
        "GET http://127.0.0.1:{port}/p?q=1 HTTP/1.1\r\n"
        "Host: elsewhere.example\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\n"
        "Proxy-Connection: keep-alive\r\n"
        "Connection: keep-alive\r\n"
        "User-Agent: test\r\n"
        "Content-Length: 4\r\n\r\nbody"
    )
    with raw_server(capture) as port, proxy("127.0.0.1") as path:
        answer = exchange(path, request.format(port=port).encode())

    assert answer == b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"
    assert seen == [
        (
            f"GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: test\r\n"
            "Content-Length: 4\r\nConnection: close\r\n\r\nbody"
        ).encode()
    ]


@pytest.mark.parametrize(
    ("request_head", "port"),
    [
        (b"GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n", 80),
        (b"GET http://EVIL.example:8080/ HTTP/1.1\r\n\r\n", 8080),
        (b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", 443),
    ],
)
def test_host_outside_the_policy_is_refused_and_reported(request_head: bytes, port: int) -> None:
    refusals: list[Refusal] = []
    with proxy("127.0.0.1", "*.example.org", on_refused=refusals.append) as path:
        answer = exchange(path, request_head)

    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert answer.endswith(f"evil.example:{port} refused: {NOT_ALLOWED}\n".encode())
    assert refusals == [Refusal("evil.example", port, NOT_ALLOWED)]


@pytest.mark.parametrize(
    ("request_head", "complaint"),
    [
        (b"nonsense\r\n\r\n", "malformed request line"),
        (b"GET /relative HTTP/1.1\r\n\r\n", "expected an absolute http:// URI"),
        (b"GET https://127.0.0.1/ HTTP/1.1\r\n\r\n", "expected an absolute http:// URI"),
        (b"GET http://127.0.0.1/ SPDY/3\r\n\r\n", "malformed request line"),
        (b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", "no host and port"),
        (b"CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n", "invalid port"),
        (b"GET http://127.0.0.1/ HTTP/1.1\r\nno colon\r\n\r\n", "malformed header line"),
        (b"GET http://127.0.0.1/ HTTP/1.1\r\nX-Long: " + b"a" * MAX_HEAD_BYTES, "larger than"),
        (b"GET http://127.0.0.1/ HTTP/1.1\r\nX-A: b\nHost: evil.com\r\n\r\n", "bare CR, LF"),
        (b"GET http://127.0.0.1/\rx HTTP/1.1\r\n\r\n", "bare CR, LF"),
        (b"GET http://[::1/ HTTP/1.1\r\n\r\n", "malformed request target"),
        (b"CONNECT [::1:443 HTTP/1.1\r\n\r\n", "malformed request target"),
    ],
)
def test_malformed_requests_get_400(request_head: bytes, complaint: str) -> None:
    refusals: list[Refusal] = []
    with proxy("127.0.0.1", on_refused=refusals.append) as path:
        answer = exchange(path, request_head)

    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert complaint.encode() in answer
    assert refusals == []


def test_unreachable_upstream_gets_502() -> None:
    port = closed_port()
    with proxy("127.0.0.1") as path:
        answer = exchange(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())

    assert answer.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
    assert f"127.0.0.1:{port} unreachable".encode() in answer


def test_a_failing_callback_is_logged_and_the_proxy_keeps_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(refusal: Refusal) -> None:
        raise RuntimeError(f"audit down for {refusal.host}")

    with http_server() as port, proxy("127.0.0.1", on_refused=explode) as path:
        refused = exchange(path, b"GET http://evil.example/ HTTP/1.1\r\n\r\n")
        served = exchange(path, f"GET http://127.0.0.1:{port}/file HTTP/1.1\r\n\r\n".encode())

    assert refused.startswith(b"HTTP/1.1 403 ")
    assert served.endswith(BODY)
    failures = [r for r in caplog.records if r.getMessage().startswith("on_refused callback")]
    assert len(failures) == 1
    assert failures[0].exc_info is not None
    assert "audit down for evil.example" in str(failures[0].exc_info[1])


def test_socket_lives_in_a_private_directory_removed_on_close() -> None:
    server = AllowlistProxy(NetworkPolicy(("127.0.0.1",)), lambda _: None)
    path = server.start()
    try:
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_ISSOCK(path.stat().st_mode)
    finally:
        server.close()

    assert not path.parent.exists()
    with pytest.raises(FileNotFoundError), connect(path):
        pass


def test_close_ends_open_tunnels() -> None:
    release = threading.Event()

    def hold(connection: socket.socket) -> None:
        release.wait(10)

    with raw_server(hold) as port:
        server = AllowlistProxy(NetworkPolicy(("127.0.0.1",)), lambda _: None)
        with connect(server.start()) as client:
            try:
                client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
                assert read_head(client).startswith(b"HTTP/1.1 200 ")
            finally:
                server.close()
            ended = read_to_end(client)
        release.set()

    assert ended == b""

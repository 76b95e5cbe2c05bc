"""An HTTP forward proxy on a unix socket that only reaches allowlisted hosts.

Jailed commands get to it through the forwarder of `NetworkJail`. It speaks CONNECT (a
byte tunnel, for HTTPS) and plain HTTP with absolute URIs (forwarded in origin form with
`Connection: close`). Requests for hosts outside the policy are answered 403 and reported.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import SplitResult, urlsplit

from toolrun.sandbox.jail.forwarder import relay
from toolrun.sandbox.network import NetworkPolicy

logger = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 << 10
_HOP_BY_HOP = frozenset({"host", "connection", "keep-alive", "te", "trailer", "upgrade"})
_REASONS = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}


@dataclass(frozen=True)
class Refusal:
    """A request the policy turned down."""

    host: str
    port: int
    reason: str


class _BadRequest(Exception):
    """The client's request head cannot be served."""


@dataclass(frozen=True)
class _Request:
    """A parsed request head: where it goes and what to send upstream first."""

    host: str
    port: int
    tunnel: bool
    upstream_head: bytes  # empty for CONNECT


class AllowlistProxy:
    """Serves one unix socket in a private directory; one daemon thread per connection."""

    def __init__(
        self,
        policy: NetworkPolicy,
        on_refused: Callable[[Refusal], None],
        *,
        connect_timeout_s: float = 5.0,
        idle_timeout_s: float = 60.0,
    ) -> None:
        self.policy = policy
        self._on_refused = on_refused
        self._connect_timeout_s = connect_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = False
        self._listener: socket.socket | None = None
        self._directory: Path | None = None
        self._acceptor: threading.Thread | None = None

    def start(self) -> Path:
        """Listen on a unix socket in a fresh 0700 temp directory; the socket's path."""
        if self._listener is not None:
            raise RuntimeError("proxy already started")
        self._directory = Path(tempfile.mkdtemp(prefix="toolrun-proxy-"))
        path = self._directory / "proxy.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(path))
            listener.listen(128)
        except OSError:
            listener.close()
            shutil.rmtree(self._directory, ignore_errors=True)
            raise
        self._listener = listener
        self._acceptor = threading.Thread(target=self._accept, name="allowlist-proxy", daemon=True)
        self._acceptor.start()
        return path

    def close(self) -> None:
        """Stop accepting, close every open tunnel, and remove the socket's directory."""
        with self._lock:
            self._closed = True
            tracked = list(self._open)
        for sock in tracked:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept
        if self._acceptor is not None:
            self._acceptor.join(timeout=self._connect_timeout_s)
        if self._listener is not None:
            self._listener.close()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)

    def __enter__(self) -> Path:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _accept(self) -> None:
        assert self._listener is not None  # noqa: S101 - set before the thread starts
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._track(client):
                client.close()
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if not self._closed:
                self._open.add(sock)
            return not self._closed

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        sock.close()

    def _serve(self, client: socket.socket) -> None:
        try:
            client.settimeout(self._idle_timeout_s)
            self._handle(client)
        except OSError as exc:
            logger.debug("proxy connection ended: %s", exc)
        finally:
            self._untrack(client)

    def _handle(self, client: socket.socket) -> None:
        try:
            head, rest = _read_head(client)
            request = _parse_head(head)
        except _BadRequest as exc:
            _answer(client, 400, f"bad request: {exc}")
            return
        where = f"{request.host}:{request.port}"
        if not self.policy.allows(request.host):
            reason = "host not in network allowlist"
            logger.info("proxy refused %s: %s", where, reason)
            self._report(Refusal(request.host, request.port, reason))
            _answer(client, 403, f"{where} refused: {reason}")
            return
        try:
            upstream = socket.create_connection(
                (request.host, request.port), timeout=self._connect_timeout_s
            )
        except OSError as exc:
            _answer(client, 502, f"{where} unreachable: {exc.strerror or exc}")
            return
        if not self._track(upstream):
            upstream.close()
            return
        try:
            if request.tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            upstream.sendall(request.upstream_head + rest)
            relay(client, upstream, self._idle_timeout_s)
        finally:
            self._untrack(upstream)

    def _report(self, refusal: Refusal) -> None:
        try:
            self._on_refused(refusal)
        except Exception:
            logger.exception("on_refused callback failed for %s", refusal)


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """The request head (without the blank line) and whatever body bytes came with it.

    Raises:
        _BadRequest: the head is too large or the client stopped before finishing it.
    """
    buffer = b""
    while (end := buffer.find(b"\r\n\r\n")) < 0:
        if len(buffer) > MAX_HEAD_BYTES:
            raise _BadRequest(f"request head larger than {MAX_HEAD_BYTES} bytes")
        chunk = client.recv(MAX_HEAD_BYTES)
        if not chunk:
            raise _BadRequest("connection closed inside the request head")
        buffer += chunk
    if end > MAX_HEAD_BYTES:
        raise _BadRequest(f"request head larger than {MAX_HEAD_BYTES} bytes")
    return buffer[:end], buffer[end + 4 :]


def _parse_head(head: bytes) -> _Request:
    """Where a request goes and, for plain HTTP, the head to send there.

    Raises:
        _BadRequest: not a CONNECT or absolute-URI HTTP/1.x request.
    """
    text = head.decode("latin-1")
    if _STRAY.search(text.replace("\r\n", "")):  # a bare LF or CR could smuggle a header
        raise _BadRequest("request head holds a bare CR, LF or NUL")
    request_line, *header_lines = text.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest(f"malformed request line {request_line[:200]!r}")
    method, target, version = parts
    headers = [_header(line) for line in header_lines]
    if method.upper() == "CONNECT":
        host, port = _authority(_split(f"//{target}"), default_port=None)
        return _Request(host, port, tunnel=True, upstream_head=b"")
    url = _split(target)
    if url.scheme.lower() != "http":
        raise _BadRequest(f"expected an absolute http:// URI, got {target[:200]!r}")
    host, port = _authority(url, default_port=80)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    shown = f"[{host}]" if ":" in host else host
    lines = [f"{method} {path} {version}", f"Host: {shown}" + ("" if port == 80 else f":{port}")]
    lines += [
        f"{name}: {value}"
        for name, value in headers
        if name.lower() not in _HOP_BY_HOP and not name.lower().startswith("proxy-")
    ]
    lines += ["Connection: close", "", ""]
    return _Request(host, port, tunnel=False, upstream_head="\r\n".join(lines).encode("latin-1"))


_STRAY = re.compile(r"[\r\n\x00]")


def _split(target: str) -> SplitResult:
    try:
        return urlsplit(target)
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise _BadRequest(f"malformed request target {target[:200]!r}: {exc}") from exc


def _header(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon or not name or name != name.strip():
        raise _BadRequest(f"malformed header line {line[:200]!r}")
    return name, value.strip()


def _authority(url: SplitResult, *, default_port: int | None) -> tuple[str, int]:
    """Host and port of a split URL.

    Raises:
        _BadRequest: no host, or a missing or invalid port.
    """
    try:
        host, port = url.hostname, url.port
    except ValueError as exc:
        raise _BadRequest(f"invalid port: {exc}") from exc
    port = default_port if port is None else port
    if not host or port is None or not 0 < port < 65536:
        raise _BadRequest("the request names no host and port")
    return host, port


def _answer(client: socket.socket, status: int, message: str) -> None:
    """Send a short text response and end the exchange."""
    body = f"toolrun proxy: {message}\n".encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + body)

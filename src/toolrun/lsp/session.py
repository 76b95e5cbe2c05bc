"""One language server process, spoken to over stdio with JSON-RPC (LSP framing).

A reader thread takes every message off the server's stdout: responses complete the
request waiting for them, diagnostics are kept per document, and the server's own
requests (configuration, progress, registrations) get an empty answer so it never waits
on us. Documents are opened once and sent again in full when their text changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.lsp.servers import LANGUAGE_IDS, ServerSpec
from toolrun.sandbox.runner import ProcessRunner

STDERR_KEPT = 16 * 1024


class LspSession:
    """A started, initialized server for one workspace and language."""

    def __init__(
        self,
        spec: ServerSpec,
        root: Path,
        *,
        runner: ProcessRunner,
        timeout_s: float = 30.0,
    ) -> None:
        self.spec = spec
        self.root = root
        self.timeout_s = timeout_s
        self.last_used = time.monotonic()
        self._next_id = 0
        self._pending: dict[int, Future[Any]] = {}
        self._documents: dict[str, tuple[int, str]] = {}  # uri → (version, text)
        self._diagnostics: dict[str, list[dict[str, Any]]] = {}
        self._diagnostics_seen = threading.Condition()
        self._write_lock = threading.Lock()
        self._stderr = bytearray()
        self.process = replace(runner, cwd=root).start(spec.command)
        assert self.process.stdout is not None  # noqa: S101 - PIPE was asked for
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._initialize()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and wait for its result.

        Raises:
            ToolTimeout: no answer within timeout_s.
            ToolExecutionError: the server answered with an error, or died.
        """
        self.last_used = time.monotonic()
        future: Future[Any] = Future()
        with self._write_lock:
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = future
            self._send({"id": request_id, "method": method, "params": params})
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout as exc:
            raise ToolTimeout(
                f"{self.spec.command[0]} did not answer {method} in {self.timeout_s:g} s"
            ) from exc
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        with self._write_lock:
            self._send({"method": method, "params": params})

    def sync(self, path: Path, text: str) -> str:
        """Make the server see `text` as the content of `path`; returns its URI."""
        uri = path.as_uri()
        known = self._documents.get(uri)
        if known is None:
            self._documents[uri] = (1, text)
            document = {"uri": uri, "languageId": LANGUAGE_IDS[self.spec.language]}
            self.notify(
                "textDocument/didOpen", {"textDocument": {**document, "version": 1, "text": text}}
            )
        elif known[1] != text:
            version = known[0] + 1
            self._documents[uri] = (version, text)
            with self._diagnostics_seen:
                self._diagnostics.pop(uri, None)
            self.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}],
                },
            )
            self.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": text})
        return uri

    def diagnostics(self, uri: str, wait_s: float) -> list[dict[str, Any]]:
        """The diagnostics last published for `uri`, waiting up to `wait_s` for the first."""
        deadline = time.monotonic() + wait_s
        with self._diagnostics_seen:
            while uri not in self._diagnostics and self.alive:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._diagnostics_seen.wait(left)
            return list(self._diagnostics.get(uri, []))

    def close(self) -> None:
        """shutdown, exit, then make sure the process group is gone."""
        if self.alive:
            with contextlib.suppress(ToolExecutionError, ToolTimeout, OSError, ValueError):
                self.timeout_s = min(self.timeout_s, 3.0)
                self.request("shutdown", {})
                self.notify("exit", {})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _initialize(self) -> None:
        capabilities = {
            "textDocument": {
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "definition": {"linkSupport": False},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                "publishDiagnostics": {"relatedInformation": False},
                "synchronization": {"didSave": True},
            },
            "workspace": {"symbol": {}, "configuration": True},
        }
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self.root.as_uri(),
                "rootPath": str(self.root),
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
                "capabilities": capabilities,
            },
        )
        self.notify("initialized", {})

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin = self.process.stdin
        try:
            assert stdin is not None  # noqa: S101 - PIPE was asked for
            stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise self._died() from exc

    def _read(self, stdout: IO[bytes]) -> None:
        while True:
            message = _read_message(stdout)
            if message is None:
                break
            self._dispatch(message)
        for future in list(self._pending.values()):  # the server is gone
            if not future.done():
                future.set_exception(self._died())
        with self._diagnostics_seen:
            self._diagnostics_seen.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:  # the server asks us something
            answer = _answer_for(message["method"], message.get("params"))
            with self._write_lock, contextlib.suppress(ToolExecutionError):
                self._send({"id": message["id"], "result": answer})
        elif "id" in message:
            future = self._pending.get(message["id"])
            if future is not None and not future.done():
                error = message.get("error")
                if error is not None:
                    future.set_exception(
                        ToolExecutionError(f"{self.spec.command[0]}: {error.get('message')}")
                    )
                else:
                    future.set_result(message.get("result"))
        elif message.get("method") == "textDocument/publishDiagnostics":
            params = message.get("params") or {}
            with self._diagnostics_seen:
                self._diagnostics[params.get("uri", "")] = params.get("diagnostics", [])
                self._diagnostics_seen.notify_all()

    def _drain_stderr(self) -> None:
        """Keep the tail of what the server says on stderr, for error messages."""
        stderr = self.process.stderr
        if stderr is None:
            return
        for chunk in iter(lambda: os.read(stderr.fileno(), 4096), b""):
            self._stderr = (self._stderr + chunk)[-STDERR_KEPT:]

    def _died(self) -> ToolExecutionError:
        said = self._stderr.decode(errors="replace").strip().splitlines()[-3:]
        detail = f": {' | '.join(said)}" if said else ""
        return ToolExecutionError(f"language server {self.spec.command[0]} exited{detail}")


def _answer_for(method: str, params: Any) -> Any:
    """What the server gets when it asks: nothing configured, nothing to report."""
    if method == "workspace/configuration" and isinstance(params, dict):
        return [None for _ in params.get("items", [])]
    return None


def _read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """One framed message, or None at the end of the stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", errors="replace").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    body = stream.read(length)
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}

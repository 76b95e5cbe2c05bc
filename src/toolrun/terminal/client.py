"""Reaching this machine's terminal host, starting it when it is not running."""

from __future__ import annotations

import contextlib
import fcntl
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from toolrun.errors import ToolExecutionError, ToolTimeout

START_TIMEOUT_S = 10.0
# -P: the working directory (the workspace, which tools write) is not on sys.path.
HOST_COMMAND = (sys.executable, "-P", "-m", "toolrun.terminal.host")


class HostClient:
    """Requests to the host listening on `socket_path` (one connection each)."""

    def __init__(self, socket_path: Path, *, idle_s: float) -> None:
        self.socket_path = socket_path
        self.idle_s = idle_s

    def request(self, payload: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        """The host's answer.

        Raises:
            ToolExecutionError: the session is gone ("lost") or the host refused the request.
        """
        try:
            answer = self._exchange(payload, timeout_s)
        except TimeoutError as exc:
            raise ToolTimeout(f"the terminal host did not answer in {timeout_s:g} s") from exc
        except (FileNotFoundError, ConnectionError):  # no host, or one that just died
            if payload.get("op") != "open":
                raise _lost(payload, "lost") from None
            self._start()
            answer = self._exchange(payload, timeout_s)
        if answer.get("ok"):
            return answer
        if "lost" in answer:
            raise _lost(payload, answer["lost"])
        raise ToolExecutionError(f"terminal: {answer.get('error', 'the host failed')}")

    def stop(self) -> bool:
        """Stop a running host, closing its sessions, and wait until it has stopped
        answering; False when none was running."""
        if not self._answers():
            return False
        with contextlib.suppress(OSError, ValueError):
            self._exchange({"op": "stop"}, START_TIMEOUT_S)
        deadline = time.monotonic() + START_TIMEOUT_S
        while self._answers() and time.monotonic() < deadline:
            time.sleep(0.05)
        return True

    def _exchange(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout_s)
            connection.connect(str(self.socket_path))
            connection.sendall(json.dumps(payload).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
        answer: dict[str, Any] = json.loads(data or b"{}")
        return answer

    def _start(self) -> None:
        """Start the host (one process starts it; the others wait for its socket)."""
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{self.socket_path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self._answers():
                return
            # Through a shell that leaves it running in the background: the host is no
            # child of this (short-lived) worker process.
            launch = 'exec "$@" </dev/null >/dev/null 2>&1 &'
            host = [*HOST_COMMAND, str(self.socket_path), "--idle-s", str(self.idle_s)]
            subprocess.run(
                ["/bin/sh", "-c", launch, "sh", *host], check=True, start_new_session=True
            )
            deadline = time.monotonic() + START_TIMEOUT_S
            while not self._answers():
                if time.monotonic() > deadline:
                    raise ToolExecutionError("the terminal host did not start")
                time.sleep(0.05)

    def _answers(self) -> bool:
        with contextlib.suppress(OSError, ValueError):
            return bool(self._exchange({"op": "ping"}, 1.0).get("ok"))
        return False


def lost_message(session: object, reason: str) -> str:
    """What a call for a session that is gone answers."""
    return f"terminal session {session} is lost: {reason}; open a new one"


def _lost(payload: dict[str, Any], why: str) -> ToolExecutionError:
    reason = {
        "expired": "it expired after being idle",
        "closed": "it was closed",
        "stopped": "the platform was stopped",
    }.get(why, "its host restarted, or it was never opened by this agent")
    return ToolExecutionError(lost_message(payload.get("session"), reason))

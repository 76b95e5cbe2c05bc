"""The terminal host of one machine: a process that keeps the terminal sessions, so that
every worker process of the machine can reach them (a session outlives the worker
process that opened it). It answers one JSON request per connection on a unix socket.

`python -m toolrun.terminal.host SOCKET --idle-s N`: sessions unused for N seconds are
closed; the host exits once it has had no session for N seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import secrets
import socketserver
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from toolrun.sandbox.jail import confine
from toolrun.sandbox.jail.plan import JailPlan
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.tracking import Tracker, new_tracker
from toolrun.terminal.session import KEYS, TerminalSession

MAX_WAIT_S = 120.0
_REMEMBERED_ENDS = 1000


class SessionLost(Exception):
    """No such session for this agent (never opened, expired, closed, or the host
    restarted)."""


class Host:
    """The sessions, by id; each belongs to the agent that opened it."""

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self.sessions: dict[str, tuple[str | None, TerminalSession]] = {}
        self.trackers: dict[str, Tracker] = {}  # each session's processes (cgroup, pids.max)
        self.ended: OrderedDict[str, str] = OrderedDict()  # id → why it ended
        self.lock = threading.Lock()
        self.last_session_at = time.monotonic()
        self.stopping = False

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "open":
            return self.open(request)
        if op == "ping":
            return {"pid": os.getpid()}
        if op == "stop":
            return {"closed": self.stop()}
        session_id, session = self.find(request.get("session"), request.get("agent_id"))
        if op == "send":
            text = request.get("text", "") + "".join(KEYS[key] for key in request.get("keys", []))
            session.send(text)
            return {}
        if op == "read":
            return self.state(session, screen=bool(request.get("screen")))
        if op == "wait_for":
            pattern = re.compile(request["pattern"], re.MULTILINE)
            timeout = min(float(request.get("timeout_s", 10)), MAX_WAIT_S)
            matched = session.wait_for(pattern, timeout)
            return {"matched": matched, **self.state(session, screen=False)}
        if op == "resize":
            session.resize(int(request["cols"]), int(request["rows"]))
            return {"screen": session.rendered()}
        if op == "close":
            self.end(session_id, "closed")
            return {"exit_code": session.exit_code}
        raise ValueError(f"unknown operation {op!r}")

    def open(self, request: dict[str, Any]) -> dict[str, Any]:
        session_id = f"{request['machine']}-{secrets.token_hex(8)}"
        maximum = request.get("max_processes")
        tracker = new_tracker(
            f"terminal-{session_id}",
            use_cgroups=bool(request.get("use_cgroups", True)),
            max_processes=None if maximum is None else int(maximum),
        )
        prepare = _preparation(request)

        def preexec() -> None:
            tracker.enter()  # before the jail: the session's group caps its processes
            prepare()

        try:
            session = TerminalSession(
                request["argv"],
                cwd=request["cwd"],
                env=request["env"],
                cols=int(request["cols"]),
                rows=int(request["rows"]),
                preexec=preexec,
            )
        except BaseException:
            tracker.close()
            raise
        with self.lock:
            self.sessions[session_id] = (request.get("agent_id"), session)
            self.trackers[session_id] = tracker
        return {"session": session_id, "pid": session.child.pid}

    def find(self, session_id: object, agent_id: object) -> tuple[str, TerminalSession]:
        with self.lock:
            found = self.sessions.get(str(session_id))
            if found is None or found[0] != agent_id:
                why = self.ended.get(str(session_id)) if found is None else None
                raise SessionLost(why or "lost")
            return str(session_id), found[1]

    def end(self, session_id: str, why: str) -> None:
        with self.lock:
            found = self.sessions.pop(session_id, None)
            tracker = self.trackers.pop(session_id, None)
            self.ended[session_id] = why
            while len(self.ended) > _REMEMBERED_ENDS:
                self.ended.popitem(last=False)
            if not self.sessions:
                self.last_session_at = time.monotonic()
        if found is not None:
            found[1].close()
        if tracker is not None:
            tracker.kill_all()
            tracker.close()

    def stop(self) -> int:
        """Close every session and have the host exit; returns how many were closed."""
        self.stopping = True
        with self.lock:
            open_ids = list(self.sessions)
        for session_id in open_ids:
            self.end(session_id, "stopped")
        return len(open_ids)

    def state(self, session: TerminalSession, *, screen: bool) -> dict[str, Any]:
        output, dropped = session.take()
        found: dict[str, Any] = {
            "output": output,
            "dropped_chars": dropped,
            "alive": session.alive,
            "exit_code": session.exit_code,
        }
        if screen:
            found["screen"] = session.rendered()
        return found

    def sweep(self) -> bool:
        """Close idle sessions; False once the host itself has been idle long enough."""
        now = time.monotonic()
        with self.lock:
            idle = [sid for sid, (_, s) in self.sessions.items() if now - s.last_used > self.idle_s]
        for session_id in idle:
            self.end(session_id, "expired")
        with self.lock:
            if self.stopping:
                return False
            return bool(self.sessions) or now - self.last_session_at < self.idle_s


def _preparation(request: dict[str, Any]) -> Callable[[], None]:
    """What a session's child runs before exec: its jail, or (unjailed) its limits."""
    if "jail" in request:
        plan = JailPlan.from_json(request["jail"])
        return lambda: confine.enter(plan)
    return ResourceLimits(**request.get("limits", {})).apply


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        try:
            request = json.loads(self.rfile.readline())
            answer = {"ok": True, **self.server.host.handle(request)}
        except SessionLost as exc:
            answer = {"ok": False, "lost": str(exc)}
        except Exception as exc:  # one request's failure must not stop the host
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(answer).encode() + b"\n")


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, host: Host) -> None:
        self.host = host
        super().__init__(path, _Handler)


def serve(path: str, idle_s: float) -> None:
    """Serve on `path` until idle for `idle_s` with no session."""
    host = Host(idle_s)
    if os.path.exists(path):
        os.unlink(path)  # a previous host's socket: it is gone (the caller holds the lock)
    server = _Server(path, host)
    os.chmod(path, 0o600)
    mine = os.stat(path).st_ino
    threading.Thread(target=server.serve_forever, daemon=True).start()
    while host.sweep():
        time.sleep(min(0.2, idle_s / 4))
    server.shutdown()
    # Under the start lock, and only if it is still this host's: a host started since
    # (this one stopped answering) has bound a socket of its own at the same path.
    with open(f"{path}.lock", "a") as lock, contextlib.suppress(OSError):
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.stat(path).st_ino == mine:
            os.unlink(path)


def main() -> None:
    parser = argparse.ArgumentParser(description="toolrun's terminal host")
    parser.add_argument("socket")
    parser.add_argument("--idle-s", type=float, default=600.0)
    args = parser.parse_args()
    serve(args.socket, args.idle_s)


if __name__ == "__main__":
    main()

"""Warm language servers of this process: one per (workspace, language), started on first
use, started again when it died, shut down when idle or at exit. A child forked from a
process with servers starts its own (it never writes to its parent's pipes)."""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from toolrun.lsp.servers import ServerSpec
from toolrun.lsp.session import LspSession

Key = tuple[str, str]  # workspace root, language


class ServerPool:
    def __init__(self, start: Callable[[ServerSpec, Path], LspSession], *, idle_s: float) -> None:
        self._start = start
        self.idle_s = idle_s
        self._sessions: dict[Key, LspSession] = {}
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self.restarts = 0
        atexit.register(self.close)

    def session(self, spec: ServerSpec, root: Path) -> LspSession:
        """The running server for `spec` in `root`, started (again) if need be."""
        with self._lock:
            if self._pid != os.getpid():  # forked: the sessions belong to the parent
                self._sessions = {}
                self._pid = os.getpid()
            self._expire()
            key = (str(root), spec.language)
            found = self._sessions.get(key)
            if found is not None and (not found.alive or found.spec != spec):
                found.close()
                self.restarts += 1
                found = None
            if found is None:
                found = self._sessions[key] = self._start(spec, root)
            return found

    def sessions(self) -> list[LspSession]:
        with self._lock:
            return list(self._sessions.values()) if self._pid == os.getpid() else []

    def close(self) -> None:
        """Shut every server of this process down."""
        with self._lock:
            sessions = list(self._sessions.values()) if self._pid == os.getpid() else []
            self._sessions = {}
        for session in sessions:
            session.close()

    def _expire(self) -> None:
        now = time.monotonic()
        for key, session in list(self._sessions.items()):
            if now - session.last_used > self.idle_s:
                del self._sessions[key]
                session.close()

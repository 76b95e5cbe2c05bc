"""Starts a set of child processes and stops them all together."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

_STOP_GRACE_S = 10.0
_POLL_S = 0.2


@dataclass
class Child:
    name: str
    argv: Sequence[str]
    process: subprocess.Popen[bytes] | None = None


@dataclass
class Supervisor:
    """Children share one environment; if any one exits, `wait` returns its name."""

    env: dict[str, str]
    children: list[Child] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str]) -> None:
        child = Child(name, argv)
        # Own process group, so Ctrl-C in the terminal reaches us only: we stop them in order.
        child.process = subprocess.Popen(list(argv), env=self.env, start_new_session=True)
        self.children.append(child)

    def wait(self) -> str:
        """Block until a child exits; returns its name."""
        while True:
            for child in self.children:
                if child.process is not None and child.process.poll() is not None:
                    return child.name
            time.sleep(_POLL_S)

    def stop(self) -> None:
        """SIGTERM every child (newest first), then SIGKILL whatever is left after a grace."""
        for child in reversed(self.children):
            if child.process is not None and child.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + _STOP_GRACE_S
        for child in self.children:
            if child.process is None:
                continue
            try:
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, signal.SIGKILL)  # pool children too
                child.process.wait()

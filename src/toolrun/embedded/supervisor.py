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
        """Stop every child, newest first (see `terminate`)."""
        started = [child.process for child in self.children if child.process is not None]
        terminate(list(reversed(started)), _STOP_GRACE_S)


def terminate(processes: Sequence[subprocess.Popen[bytes]], grace_s: float) -> None:
    """SIGTERM each process, wait up to `grace_s` in all, then SIGKILL the process group of
    any still running (a Celery worker's pool children with it). Each was started with
    start_new_session=True, so its group is its own.
    """
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

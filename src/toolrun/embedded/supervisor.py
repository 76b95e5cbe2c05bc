"""Starts a set of child processes, restarts the ones that die, and stops them all together.

A child that exits is started again after a backoff (1 s, 2 s, 4 s… at most 30 s). One
that exits more than `max_exits` times within `window_s` is in a crash loop: a required
child then stops the platform (`watch` returns why); an optional one (Flower) is given up
on and the platform goes on without it. What happened is reported through `report` (the
console) and kept in a status file that /healthz shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_STOP_GRACE_S = 10.0
_POLL_S = 0.2
STATUS_FILE = "processes.json"  # in the platform's home: /healthz reads it
LOGS = "logs"  # in the platform's home: each process's output, unless `toolrun up --verbose`


@dataclass
class Child:
    name: str
    argv: Sequence[str]
    optional: bool = False  # its crash loop does not stop the platform
    umask: int = -1  # the process's umask (-1: ours)
    stop_last: bool = False  # stopped after the others have exited (what they all use)
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    exits: deque[float] = field(default_factory=deque)  # recent exit times (monotonic)
    restart_at: float | None = None  # when it is due to start again
    given_up: bool = False

    @property
    def state(self) -> str:
        if self.given_up:
            return "given up"
        if self.restart_at is not None:
            return "restarting"
        return "running"


@dataclass
class Supervisor:
    """Children share one environment (see the module docstring)."""

    env: dict[str, str]
    children: list[Child] = field(default_factory=list)
    report: Callable[[str], None] = print
    status_path: Path | None = None
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_exits: int = 5
    window_s: float = 60.0
    log_dir: Path | None = None  # each child's output to `<name>.log` there (None: ours)

    def log_of(self, child: Child) -> Path | None:
        """Where `child`'s output goes (None: this process's console)."""
        return (
            None if self.log_dir is None else self.log_dir / f"{child.name.replace(' ', '-')}.log"
        )

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        optional: bool = False,
        umask: int = -1,
        stop_last: bool = False,
    ) -> Child:
        child = Child(name, argv, optional=optional, umask=umask, stop_last=stop_last)
        self._spawn(child)
        self.children.append(child)
        self._write_status()
        return child

    def watch(self, stop: threading.Event | None = None) -> str | None:
        """Keep the children running until `stop` is set (None) or a required child is in
        a crash loop: then the reason, for the console."""
        stop = stop or threading.Event()
        while not stop.is_set():
            for child in self.children:
                reason = self._tend(child, time.monotonic())
                if reason is not None:
                    return reason
            stop.wait(_POLL_S)
        return None

    def stop(self) -> None:
        """Stop every child, newest first (see `terminate`); those marked `stop_last`
        once the others have exited."""
        for last in (False, True):
            started = [
                child.process
                for child in reversed(self.children)
                if child.process is not None and child.stop_last == last
            ]
            terminate(started, _STOP_GRACE_S)

    def exited(self) -> Child | None:
        """A required child whose process has exited (during start-up: nothing restarts
        yet, and an optional child's exit never fails the start)."""
        for child in self.children:
            if (
                not child.optional
                and child.process is not None
                and child.process.poll() is not None
            ):
                return child
        return None

    def _tend(self, child: Child, now: float) -> str | None:
        if child.given_up:
            return None
        if child.restart_at is not None:
            if now >= child.restart_at:
                self._spawn(child)
                child.restarts += 1
                child.restart_at = None
                self.report(f"{child.name} restarted (restart {child.restarts})")
                self._write_status()
            return None
        process = child.process
        if process is None or process.poll() is None:
            return None
        code = process.returncode
        child.exits.append(now)
        while child.exits and now - child.exits[0] > self.window_s:
            child.exits.popleft()
        if len(child.exits) > self.max_exits:
            loop = f"{child.name} exited {len(child.exits)} times in {self.window_s:g} s"
            if not child.optional:
                self._write_status()
                return f"{loop} (last exit code {code}); stopping the platform"
            child.given_up = True
            self.report(f"{loop} (last exit code {code}); the platform goes on without it")
        else:
            delay = min(self.max_backoff_s, self.backoff_s * 2 ** (len(child.exits) - 1))
            child.restart_at = now + delay
            self.report(f"{child.name} exited (code {code}); restarting in {delay:g} s")
        self._write_status()
        return None

    def _spawn(self, child: Child) -> None:
        # Own process group, so Ctrl-C in the terminal reaches us only: we stop them in order.
        log = self.log_of(child)
        if log is None:
            child.process = subprocess.Popen(
                list(child.argv), env=self.env, start_new_session=True, umask=child.umask
            )
            return
        log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with log.open("ab") as sink:  # a restart appends
            log.chmod(0o600)
            child.process = subprocess.Popen(
                list(child.argv),
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                umask=child.umask,
            )

    def status(self) -> dict[str, dict[str, Any]]:
        """Each child's pid, state and restarts."""
        return {
            child.name: {
                "pid": None if child.process is None else child.process.pid,
                "state": child.state,
                "restarts": child.restarts,
                "optional": child.optional,
            }
            for child in self.children
        }

    def _write_status(self) -> None:
        """Replace the status file at once (a reader never sees half of it)."""
        if self.status_path is None:
            return
        partial = self.status_path.with_name(f".{self.status_path.name}.{os.getpid()}")
        partial.write_text(json.dumps(self.status(), sort_keys=True))
        partial.replace(self.status_path)


def read_status(path: Path) -> dict[str, Any] | None:
    """The supervisor's status file, None where there is none (no `toolrun up`)."""
    with contextlib.suppress(OSError, ValueError):
        found = json.loads(path.read_text())
        return found if isinstance(found, dict) else None
    return None


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

"""Runs tool subprocesses confined: own session, no stdin, scrubbed env, limits, tree kill."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from toolrun.errors import SandboxViolation
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.network import NetworkJail
from toolrun.sandbox.output import OutputSink
from toolrun.sandbox.tracking import CALL_MARKER_VAR, Tracker, new_tracker

_READ_CHUNK = 1 << 16
_POLL_S = 0.02


@dataclass(frozen=True)
class ProcessResult:
    """How a subprocess ended; output went to the sinks given to `run`."""

    exit_code: int | None
    timed_out: bool
    duration_s: float


@dataclass(frozen=True)
class ProcessRunner:
    """Starts subprocesses inside the sandbox rules; one instance per workspace."""

    cwd: Path
    env: dict[str, str]
    limits: ResourceLimits
    kill_grace_s: float = 1.0
    use_cgroups: bool = True
    label: str = ""  # prefix of every marker: lets another process kill this call's leftovers
    network: NetworkJail | None = None  # None: the host's network, unconfined

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        stdout: OutputSink,
        stderr: OutputSink,
        cwd_fd: int | None = None,
        pass_fds: Sequence[int] = (),
    ) -> ProcessResult:
        """Run `argv` to completion or `timeout_s`, then make sure nothing of it survives.

        The whole process tree is killed at the end either way: background jobs do not
        outlive the call. `cwd_fd`, an open directory, replaces the workspace root as the
        working directory: reached by fd, it cannot be swapped for a link in between.

        Raises:
            SandboxViolation: the program cannot be started.
        """
        marker = f"{self.label}-{secrets.token_hex(8)}" if self.label else secrets.token_hex(12)
        limits = self.limits.with_cpu_for(timeout_s)
        tracker = new_tracker(marker, use_cgroups=self.use_cgroups)

        def prepare_child() -> None:
            # Before the limits: joining the cgroup opens a file, and a parent with many
            # descriptors open (they are closed only after this) would be over a low
            # RLIMIT_NOFILE already.
            tracker.enter()
            limits.apply()
            if cwd_fd is not None:
                os.fchdir(cwd_fd)

        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                list(argv) if self.network is None else self.network.wrap(argv),
                cwd=self.cwd,
                env={**self.env, CALL_MARKER_VAR: marker},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
                pass_fds=tuple(pass_fds),
                preexec_fn=prepare_child,  # noqa: PLW1509 - setrlimit must run in the child
            )
        except (OSError, subprocess.SubprocessError) as exc:
            tracker.close()
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise SandboxViolation(f"cannot start {argv[0]}: {reason}") from exc
        tracker.attach(proc.pid)
        pumps = [_pump(proc.stdout, stdout), _pump(proc.stderr, stderr)]
        expired = threading.Event()
        # A process that ignores SIGTERM still has to let the blocking wait below return.
        escalate = threading.Timer(self.kill_grace_s, _signal_group, (proc.pid, signal.SIGKILL))

        def expire() -> None:
            expired.set()
            _signal_group(proc.pid, signal.SIGTERM)
            escalate.start()

        # A timer plus a blocking wait: Popen.wait(timeout) polls with growing sleeps.
        timer = threading.Timer(timeout_s, expire)
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
            escalate.cancel()
            _end_call(proc, tracker, self.kill_grace_s)
        for pump in pumps:
            # Every writer is dead by now; the timeout only guards against a process that
            # escaped tracking and still holds the pipe.
            pump.join(timeout=self.kill_grace_s + 1)
        timed_out = expired.is_set()
        return ProcessResult(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
        )


def _pump(stream: IO[bytes] | None, sink: OutputSink) -> threading.Thread:
    if stream is None:
        raise SandboxViolation("subprocess started without an output pipe")

    def copy() -> None:
        with stream:
            fd = stream.fileno()
            while chunk := os.read(fd, _READ_CHUNK):
                sink.feed(chunk)

    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    return thread


def _end_call(proc: subprocess.Popen[bytes], tracker: Tracker, grace_s: float) -> None:
    """TERM what is left of the call, give it `grace_s` to exit, then KILL the rest.

    The KILL runs even if an exception (a worker's soft time limit) cuts the grace short.
    """
    try:
        _signal_group(proc.pid, signal.SIGTERM)
        for pid in tracker.survivors():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while (proc.poll() is None or tracker.survivors()) and time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_POLL_S)
    finally:
        try:
            tracker.kill_all()
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
        finally:
            tracker.close()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def sandbox_env(*, path: str, home: Path) -> dict[str, str]:
    """The only environment a tool subprocess sees: nothing inherited from the host."""
    return {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "GIT_TERMINAL_PROMPT": "0",
    }

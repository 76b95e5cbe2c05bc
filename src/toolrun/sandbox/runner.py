"""Runs tool subprocesses confined: own session, no stdin, scrubbed env, limits, tree kill."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from toolrun.errors import SandboxViolation
from toolrun.sandbox.jail import confine
from toolrun.sandbox.jail.plan import JailPlan
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.output import OutputSink
from toolrun.sandbox.tracking import CALL_MARKER_VAR, Tracker, new_tracker
from toolrun.sandbox.warm import LAUNCHER, JailedProcess
from toolrun.sandbox.watch import watched

if TYPE_CHECKING:
    from toolrun.sandbox.confinement import Confinement

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
    jail: Confinement | None = None  # None: no namespaces (isolation off or unavailable)
    writable: bool = True  # the workspace, for processes in a jail
    max_processes: int | None = None  # pids.max of each call's cgroup, where there is one
    join: tuple[str, ...] = ()  # cgroup.procs files a jailed process enters (plan.join)
    # Set: this runner starts nothing, and says why (the context of a tool that declared
    # it starts no process, run without a jail).
    refusal: str | None = None

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
        self.refuse_if_barred(argv[0])
        marker = f"{self.label}-{secrets.token_hex(8)}" if self.label else secrets.token_hex(12)
        tracker = new_tracker(
            marker, use_cgroups=self.use_cgroups, max_processes=self.max_processes
        )
        env = {**self.env, CALL_MARKER_VAR: marker}
        start = self._start_forked if self.jail is None else self._start_warm
        started = time.monotonic()
        try:
            with watched(os.path.basename(argv[0])):
                proc, out, err = start(argv, env, tracker, timeout_s, cwd_fd, pass_fds)
        except SandboxViolation:
            tracker.close()
            raise
        if isinstance(proc, JailedProcess):
            # Its keeper leaves when the group is killed, ending the jail's PID namespace
            # and all in it, and is reaped at once: its pid, free again, is no group of
            # the call's to sweep.
            tracker.spare(proc.pid)
        else:
            tracker.attach(proc.pid)
        pumps = [_pump(out, stdout), _pump(err, stderr)]
        expired, over, turn = threading.Event(), threading.Event(), threading.Lock()
        # A process that ignores SIGTERM still has to let the blocking wait below return.
        escalate = threading.Timer(self.kill_grace_s, _signal_group, (proc.pid, signal.SIGKILL))

        def expire() -> None:
            with turn:
                if over.is_set():  # it fired as the command ended: the call is ending
                    return
                expired.set()
                _signal_group(proc.pid, signal.SIGTERM)
                escalate.start()

        def quiet() -> None:  # from here the timers send nothing: the leader may be reaped
            with turn:
                over.set()
            timer.cancel()
            escalate.cancel()
            if escalate.ident is not None:
                escalate.join()

        # A timer plus a blocking wait: Popen.wait(timeout) polls with growing sleeps.
        timer = threading.Timer(timeout_s, expire)
        try:
            timer.start()
            proc.wait()
        finally:
            # Quieted twice: a soft limit may cut the first short, never both.
            _every(quiet, lambda: _end_call(proc, tracker, self.kill_grace_s, quiet))
        for pump in pumps:
            # Every writer is dead by now; the timeout only guards against a process that
            # escaped tracking and still holds the pipe.
            pump.join(timeout=self.kill_grace_s + 1)
        timed_out = expired.is_set()
        if isinstance(proc, JailedProcess):
            failure = proc.failure()
            if failure is not None:
                raise SandboxViolation(f"cannot start {argv[0]}: {failure}")
        return ProcessResult(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
        )

    def plan(
        self,
        cwd: Path,
        timeout_s: float | None = None,
        *,
        terminal: bool = False,
        env: dict[str, str] | None = None,
    ) -> JailPlan:
        """The jail plan of one process started in `cwd`.

        Raises:
            SandboxViolation: the runner has no jail, or starts nothing.
        """
        self.refuse_if_barred(None)
        if self.jail is None:
            raise SandboxViolation("no jail: tool processes run unconfined on this worker")
        limits = self.limits if timeout_s is None else self.limits.with_cpu_for(timeout_s)
        plan = self.jail.plan(
            cwd=cwd,
            rlimits=limits.as_rlimits(processes=self.max_processes),
            writable=self.writable,
            terminal=terminal,
            env=env,
        )
        return replace(plan, join=self.join) if self.join else plan

    def refuse_if_barred(self, program: str | None) -> None:
        """Raises SandboxViolation, naming `program` (None: unknown yet), if this runner
        starts nothing. Whatever starts a process for a tool without this runner (the
        terminal host, an MCP stdio server) calls it first."""
        if self.refusal is not None:
            what = program or "a process"
            raise SandboxViolation(f"cannot start {what}: {self.refusal}", target=program)

    def _start_forked(
        self,
        argv: Sequence[str],
        env: dict[str, str],
        tracker: Tracker,
        timeout_s: float,
        cwd_fd: int | None,
        pass_fds: Sequence[int],
    ) -> tuple[_Process, IO[bytes] | None, IO[bytes] | None]:
        """Fork this process (unjailed: the limits between fork and exec)."""
        preparation = self._preparation(tracker, timeout_s, cwd_fd)
        proc = self._popen(argv, env, preparation, stdin=subprocess.DEVNULL, pass_fds=pass_fds)
        return _Forked(proc), proc.stdout, proc.stderr

    def _start_warm(
        self,
        argv: Sequence[str],
        env: dict[str, str],
        tracker: Tracker,
        timeout_s: float,
        cwd_fd: int | None,
        pass_fds: Sequence[int],
    ) -> tuple[_Process, IO[bytes] | None, IO[bytes] | None]:
        """Have this process's warm launcher start it in the jail (a fork of this large
        process would cost more than the jail)."""
        plan = self.plan(self._cwd(cwd_fd), timeout_s)
        plan = replace(plan, join=(*plan.join, *tracker.join_files()))
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        try:
            proc = LAUNCHER.spawn(
                argv,
                env=env,
                plan=plan,
                stdio=(null, out_write, err_write),
                pass_fds=pass_fds,
            )
        except BaseException:
            os.close(out_read)
            os.close(err_read)
            raise
        finally:
            for fd in (null, out_write, err_write):
                os.close(fd)
        return proc, open(out_read, "rb", buffering=0), open(err_read, "rb", buffering=0)

    def _cwd(self, cwd_fd: int | None) -> Path:
        """The working directory by name: a directory descriptor must not reach a jail (its
        ".." leads out of the view), and the workspace has the same name inside."""
        return Path(os.readlink(f"/proc/self/fd/{cwd_fd}")) if cwd_fd is not None else self.cwd

    def start(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """Start a process that outlives the call (a language server) in `cwd`, with pipes
        on its stdin, stdout and stderr; its owner ends its process group.

        Raises:
            SandboxViolation: the program cannot be started.
        """
        self.refuse_if_barred(argv[0])
        lasting = self if self.jail is None else replace(self, jail=self.jail.lasting())
        preparation = lasting._preparation(None, None, None)
        return self._popen(argv, self.env, preparation, stdin=subprocess.PIPE)

    def _popen(
        self,
        argv: Sequence[str],
        env: dict[str, str],
        preparation: tuple[Callable[[], None], _Report],
        *,
        stdin: int,
        pass_fds: Sequence[int] = (),
    ) -> subprocess.Popen[bytes]:
        """Fork and exec `argv` with output pipes, `preparation` run in between.

        Raises:
            SandboxViolation: the program cannot be started (the jail's reason, if it was).
        """
        prepare_child, report = preparation
        try:
            return subprocess.Popen(
                list(argv),
                cwd=self.cwd,
                env=env,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
                preexec_fn=prepare_child,  # noqa: PLW1509 - limits and jail in the child
            )
        except (OSError, subprocess.SubprocessError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else report.reason() or str(exc)
            raise SandboxViolation(f"cannot start {argv[0]}: {reason}") from exc
        finally:
            report.close()

    def _preparation(
        self, tracker: Tracker | None, timeout_s: float | None, cwd_fd: int | None
    ) -> tuple[Callable[[], None], _Report]:
        """What the child runs between fork and exec, and where it says why it failed."""
        report = _Report()
        if self.jail is None:
            limits = self.limits if timeout_s is None else self.limits.with_cpu_for(timeout_s)

            def unconfined() -> None:
                # Before the limits: joining the cgroup opens a file, and a parent with many
                # descriptors open (they are closed only after this) would be over a low
                # RLIMIT_NOFILE already.
                if tracker is not None:
                    tracker.enter()
                limits.apply()
                if cwd_fd is not None:
                    os.fchdir(cwd_fd)

            return unconfined, report
        plan = self.plan(self._cwd(cwd_fd), timeout_s)

        def jailed() -> None:
            if tracker is not None:
                tracker.enter()
            confine.enter(plan, report.write_fd)

        return jailed, report


class _Report:
    """A pipe the jail writes its failure into: subprocess only says "preexec_fn failed"."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()

    def reason(self) -> str | None:
        os.close(self.write_fd)
        self.write_fd = -1
        os.set_blocking(self.read_fd, False)
        try:
            said = os.read(self.read_fd, 4096).decode(errors="replace")
        except BlockingIOError:
            return None
        return said or None

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                os.close(fd)
        self.read_fd = self.write_fd = -1


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


class _Process(Protocol):
    """What the runner needs of a started process: a `_Forked` Popen, or a JailedProcess.

    Its pid is the id of the call's process group, signalled until the call ends. A
    `_Forked` one's `wait` and `poll` do not free it for reuse by another process, only
    its `close` does; a JailedProcess's pid is its keeper's, which lives until the group
    is killed.
    """

    pid: int
    returncode: int | None

    def wait(self, timeout: float | None = None) -> int: ...

    def poll(self) -> int | None: ...

    def close(self) -> None: ...


class _Forked:
    """A Popen whose end is seen without reaping it. A reaped leader's pid may be given
    to a new process, so a signal to its group after that could reach another call's
    processes; a zombie's pid may not, so the group is killed before `close` reaps it."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """Its exit code (-N: killed by signal N), once it has ended.

        Raises:
            subprocess.TimeoutExpired: it has not ended within `timeout`.
        """
        if self.returncode is not None:
            return self.returncode
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.0005
        while (ended := self._ended(blocking=deadline is None)) is None:
            left = deadline - time.monotonic() if deadline is not None else 0.0
            if left <= 0:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.01)
        self.returncode = ended
        return ended

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.wait(0)
        return None

    def close(self) -> None:
        """Reap it: from here its pid is free for reuse."""
        self._popen.wait()
        if self.returncode is None:
            self.returncode = self._popen.returncode

    def _ended(self, *, blocking: bool) -> int | None:
        flags = os.WEXITED | os.WNOWAIT | (0 if blocking else os.WNOHANG)
        try:
            info = os.waitid(os.P_PID, self.pid, flags)
        except ChildProcessError:  # reaped already (by a SIGCHLD handler)
            return self._popen.wait()
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _end_call(
    proc: _Process, tracker: Tracker, grace_s: float, quiet: Callable[[], None] = lambda: None
) -> None:
    """TERM what is left of the call, give it `grace_s` to exit, then KILL the rest.

    The KILL and every step after it run even if an exception (a worker's soft time
    limit) cuts the grace, or one of them, short: the group's first, at once, then the
    tracker's sweeps for what left it; only then, `quiet` having stopped whatever else
    signals the group, is the leader reaped.
    """
    try:
        _signal_group(proc.pid, signal.SIGTERM)
        for pid in tracker.survivors():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while (proc.poll() is None or tracker.survivors()) and time.monotonic() < deadline:
            if proc.returncode is not None:  # only what left the leader is waited for
                time.sleep(_POLL_S)
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_POLL_S)
    finally:
        _every(
            lambda: _signal_group(proc.pid, signal.SIGKILL),
            tracker.kill_all,
            proc.wait,
            quiet,
            proc.close,
            tracker.close,
        )


def _every(*steps: Callable[[], object]) -> None:
    """Run each step, even after one raised; then raise the first exception, if any."""
    first: BaseException | None = None
    for step in steps:
        try:
            step()
        except BaseException as exc:  # raised below, once the rest have run
            first = first or exc
    if first is not None:
        raise first


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

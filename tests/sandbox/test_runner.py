"""ProcessRunner: confined subprocesses whose whole tree is gone when `run` returns."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.interop.mcp_proxy import _stdio
from toolrun.sandbox import runner as runner_module
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.output import BoundedBytes, CappedLines
from toolrun.sandbox.runner import CALL_MARKER_VAR, ProcessResult, ProcessRunner, sandbox_env
from toolrun.tools import ToolContext
from toolrun.tools.builtin.terminal import _confinement

SH = "/bin/sh"


@pytest.fixture
def runner(settings: Settings) -> ProcessRunner:
    return ToolContext.create(settings).runner


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids started by a test; whatever still runs at teardown is killed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            process = psutil.Process(pid)
            if process.status() != psutil.STATUS_ZOMBIE:
                process.kill()


def gone(pid: int) -> bool:
    try:
        status = psutil.Process(pid).status()
    except psutil.NoSuchProcess:
        return True
    return status == psutil.STATUS_ZOMBIE


def sinks() -> tuple[BoundedBytes, BoundedBytes]:
    return BoundedBytes(1 << 20), BoundedBytes(1 << 20)


def sh(runner: ProcessRunner, script: str, timeout_s: float = 10) -> tuple[int | None, bool, str]:
    """Run `script`; exit code, whether it timed out, and its stdout."""
    out, err = sinks()
    ended = runner.run([SH, "-c", script], timeout_s=timeout_s, stdout=out, stderr=err)
    return ended.exit_code, ended.timed_out, out.data().decode()


def test_output_goes_to_the_right_sinks(runner: ProcessRunner) -> None:
    out, err = sinks()

    ended = runner.run([SH, "-c", "echo out; echo err >&2"], timeout_s=10, stdout=out, stderr=err)

    assert ended.exit_code == 0
    assert ended.timed_out is False
    assert ended.duration_s >= 0
    assert out.data() == b"out\n"
    assert err.data() == b"err\n"


@pytest.mark.parametrize("code", [0, 1, 3, 255])
def test_exit_codes_are_reported(runner: ProcessRunner, code: int) -> None:
    assert sh(runner, f"exit {code}")[:2] == (code, False)


def test_death_by_signal_is_a_negative_exit_code(runner: ProcessRunner) -> None:
    assert sh(runner, "kill -KILL $$")[0] == -9


def test_timeout_kills_the_whole_group(runner: ProcessRunner, leftovers: list[int]) -> None:
    out, err = sinks()
    started = time.monotonic()

    ended = runner.run(
        [SH, "-c", "sleep 300 & echo $!; sleep 300"], timeout_s=0.5, stdout=out, stderr=err
    )
    leftovers.append(int(out.data().split()[0]))

    assert ended.timed_out is True
    assert ended.exit_code is None
    assert time.monotonic() - started < 10
    assert gone(leftovers[0])


def test_processes_ignoring_sigterm_are_killed(runner: ProcessRunner, leftovers: list[int]) -> None:
    # An ignored signal stays ignored across fork and exec, so both the shell and its sleep
    # shrug off the TERM; only a KILL after the grace period ends them. The call runs in a
    # thread so that a runner stuck waiting fails this test instead of hanging the suite.
    out, err = sinks()
    outcome: list[ProcessResult] = []
    argv = [SH, "-c", "trap '' TERM; sleep 300 & echo $$ $!; wait"]
    worker = threading.Thread(
        target=lambda: outcome.append(runner.run(argv, timeout_s=0.5, stdout=out, stderr=err)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=8)
    leftovers.extend(int(pid) for pid in out.data().split())
    stuck = worker.is_alive()
    if stuck:  # unblock the runner: kill the two processes this test started
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        worker.join(timeout=15)

    assert not stuck, "run() did not return 8 s after a 0.5 s timeout: TERM was ignored"
    assert outcome[0].timed_out is True
    assert outcome[0].exit_code is None
    assert all(gone(pid) for pid in leftovers)


def test_background_job_is_killed_when_the_leader_exits(
    runner: ProcessRunner, leftovers: list[int]
) -> None:
    code, timed_out, stdout = sh(runner, "sleep 300 & echo $!")
    leftovers.append(int(stdout.split()[0]))

    assert (code, timed_out) == (0, False)
    assert gone(leftovers[0])


def test_the_group_is_signalled_only_while_its_leaders_pid_is_held(
    runner: ProcessRunner, leftovers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reaped leader's pid may be given to a new process, another call's group leader
    even: every signal to the group goes out while the leader is a zombie, which holds
    its pid, and it is reaped only after the last."""
    forked = dataclasses.replace(runner, jail=None)
    seen: list[tuple[int, str]] = []
    signal_group = runner_module._signal_group

    def recording(pgid: int, sig: signal.Signals) -> None:
        try:
            seen.append((sig, psutil.Process(pgid).status()))
        except psutil.NoSuchProcess:
            seen.append((sig, "reaped"))
        signal_group(pgid, sig)

    monkeypatch.setattr(runner_module, "_signal_group", recording)

    code, timed_out, stdout = sh(forked, "sleep 300 & echo $$ $!")
    leader, job = (int(pid) for pid in stdout.split())
    leftovers.append(job)

    assert (code, timed_out) == (0, False)
    assert signal.SIGKILL in [sig for sig, _ in seen]
    assert [status for _, status in seen] == [psutil.STATUS_ZOMBIE] * len(seen)
    assert gone(job)
    assert not psutil.pid_exists(leader)  # reaped once the group was dead


def test_a_timeout_firing_as_the_command_ends_sends_nothing_after_the_call(
    runner: ProcessRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timeout's timer may have decided to fire, and be descheduled, just as the
    command ends: by the time it runs, the call may be over and its leader's pid free.
    It must then send nothing, nor start the KILL that follows a TERM."""
    sent: list[tuple[signal.Signals, bool]] = []
    returned = threading.Event()
    late: list[LateTimer] = []
    signal_group = runner_module._signal_group

    def recording(pgid: int, sig: signal.Signals) -> None:
        sent.append((sig, returned.is_set()))
        signal_group(pgid, sig)

    class LateTimer(threading.Timer):
        """Past its check when the command ends; at its function once run() returned."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.done = threading.Event()
            late.append(self)

        def run(self) -> None:
            self.finished.wait(self.interval)
            if not self.finished.is_set():
                returned.wait(10)
                self.function(*self.args, **self.kwargs)
            self.finished.set()
            self.done.set()

    threads = SimpleNamespace(
        Timer=LateTimer, Event=threading.Event, Lock=threading.Lock, Thread=threading.Thread
    )
    monkeypatch.setattr(runner_module, "_signal_group", recording)
    monkeypatch.setattr(runner_module, "threading", threads)
    forked = dataclasses.replace(runner, jail=None, kill_grace_s=0.1)
    out, err = sinks()

    ended = forked.run([SH, "-c", "sleep 0.2"], timeout_s=0.05, stdout=out, stderr=err)
    returned.set()
    for timer in list(late):  # the timeout's, then the KILL's it may have started
        timer.done.wait(10) if timer.ident is not None else None

    assert (ended.exit_code, ended.timed_out) == (0, False)
    assert [sig for sig, after in sent if after] == []


class EndedLeader:
    """A leader that has exited: `wait` returns at once."""

    pid = 4_194_305  # above the kernel's largest pid_max: no process has it
    returncode: int | None = 0

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def poll(self) -> int | None:
        return 0

    def close(self) -> None:
        pass


class Undying:
    """A tracker whose one survivor outlives every TERM; counts how often it looks."""

    def __init__(self) -> None:
        self.looks = 0

    def survivors(self) -> list[int]:
        self.looks += 1
        return [EndedLeader.pid]

    def kill_all(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_grace_after_the_leader_exited_looks_for_survivors_at_a_pace() -> None:
    """A leader gone, a process that left it ignoring TERM: the grace waits for it by
    looking every `_POLL_S` (each look reads all of /proc), not as fast as it can."""
    tracker = Undying()
    grace_s = 0.2

    runner_module._end_call(EndedLeader(), tracker, grace_s)  # type: ignore[arg-type]

    assert 1 < tracker.looks <= grace_s / runner_module._POLL_S + 3


def test_a_soft_limit_inside_the_final_kill_still_ends_and_reaps_everything(
    runner: ProcessRunner, leftovers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's soft time limit is an exception raised wherever the runner happens to
    be; one raised inside the KILL of the group must not skip the sweeps after it."""

    class SoftLimit(Exception):
        pass

    signal_group = runner_module._signal_group

    def interrupted(pgid: int, sig: signal.Signals) -> None:
        if sig == signal.SIGKILL:
            raise SoftLimit
        signal_group(pgid, sig)

    monkeypatch.setattr(runner_module, "_signal_group", interrupted)
    forked = dataclasses.replace(runner, jail=None, kill_grace_s=0.2)
    out, err = sinks()
    # The daemon left the group and ignores TERM: only the tracker's KILL ends it.
    script = "trap '' TERM; setsid sleep 300 </dev/null & echo $$ $!"

    with pytest.raises(SoftLimit):
        forked.run([SH, "-c", script], timeout_s=10, stdout=out, stderr=err)
    leader, daemon = (int(pid) for pid in out.data().split())
    leftovers.append(daemon)

    assert gone(daemon)
    assert not psutil.pid_exists(leader)


def test_missing_program_is_a_sandbox_violation(runner: ProcessRunner, workspace: Path) -> None:
    out, err = sinks()

    with pytest.raises(SandboxViolation, match="cannot start"):
        runner.run([str(workspace / "no-such-program")], timeout_s=5, stdout=out, stderr=err)


def test_non_executable_program_is_a_sandbox_violation(
    runner: ProcessRunner, workspace: Path
) -> None:
    script = workspace / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    out, err = sinks()

    with pytest.raises(SandboxViolation, match="cannot start"):
        runner.run([str(script)], timeout_s=5, stdout=out, stderr=err)


def test_stdin_is_empty_and_closed(runner: ProcessRunner) -> None:
    started = time.monotonic()

    assert sh(runner, "cat; echo done", 5) == (0, False, "done\n")
    assert time.monotonic() - started < 5


def test_cwd_is_the_workspace(runner: ProcessRunner, workspace: Path) -> None:
    assert sh(runner, "pwd")[2] == f"{workspace.resolve()}\n"


def test_environment_is_only_the_sandbox_one(
    runner: ProcessRunner, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_HOST_SECRET", "hunter2")
    out, err = sinks()

    runner.run(["/usr/bin/env"], timeout_s=5, stdout=out, stderr=err)

    seen = dict(line.split("=", 1) for line in out.data().decode().splitlines())
    marker = seen.pop(CALL_MARKER_VAR)
    assert seen == sandbox_env(path=runner.env["PATH"], home=workspace.resolve())
    assert len(marker) == 24


def test_each_call_gets_its_own_marker(runner: ProcessRunner) -> None:
    first = sh(runner, f"echo ${CALL_MARKER_VAR}")[2]
    second = sh(runner, f"echo ${CALL_MARKER_VAR}")[2]

    assert first.strip()
    assert first != second


def test_resource_limits_are_applied_in_the_child(workspace: Path) -> None:
    runner = ProcessRunner(
        cwd=workspace,
        env=sandbox_env(path="/usr/bin:/bin", home=workspace),
        limits=ResourceLimits(file_size_bytes=8192, open_files=64),
    )

    _, _, stdout = sh(runner, "ulimit -c; ulimit -n; ulimit -t", timeout_s=2.5)

    assert stdout.split() == ["0", "64", "4"]
    assert sh(runner, "head -c 100000 /dev/zero > big.bin")[0] != 0
    assert (workspace / "big.bin").stat().st_size <= 8192


def test_a_parent_with_many_open_files_still_starts_a_child_under_a_low_file_cap(
    workspace: Path,
) -> None:
    """The cap applies in the child before the parent's descriptors are closed: setting up
    the call's cgroup must not need a descriptor past it."""
    runner = ProcessRunner(
        cwd=workspace,
        env=sandbox_env(path="/usr/bin:/bin", home=workspace),
        limits=ResourceLimits(open_files=16),
    )
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(40)]
    try:
        code, _, stdout = sh(runner, "ulimit -n")
    finally:
        for fd in held:
            os.close(fd)

    assert (code, stdout.strip()) == (0, "16")


def test_output_beyond_the_sink_cap_is_drained_not_blocking(runner: ProcessRunner) -> None:
    out, err = BoundedBytes(1000), BoundedBytes(1000)
    started = time.monotonic()

    ended = runner.run(
        [SH, "-c", "head -c 5000000 /dev/zero"], timeout_s=10, stdout=out, stderr=err
    )

    assert ended.exit_code == 0
    assert ended.timed_out is False
    assert out.truncated is True
    assert len(out.data()) == 1000
    assert time.monotonic() - started < 10


def test_capped_lines_sink_receives_the_stream(runner: ProcessRunner) -> None:
    out = CappedLines(head=2, tail=2, max_line_chars=100)
    err = CappedLines(head=2, tail=2, max_line_chars=100)

    ended = runner.run([SH, "-c", "seq 1 50"], timeout_s=10, stdout=out, stderr=err)

    assert ended.exit_code == 0
    assert out.text() == "1\n2\n[46 lines omitted]\n49\n50"
    assert err.text() == ""


def test_a_runner_that_starts_nothing_refuses_every_way_to_start_a_process(
    settings: Settings, workspace: Path
) -> None:
    runner = ToolContext.create(settings, processes=False).runner
    # As the executor hands it to a read_only tool: the refusal stays.
    runner = dataclasses.replace(runner, writable=False)
    marker = workspace / "started"
    out, err = sinks()

    with pytest.raises(SandboxViolation, match="declared that it starts no process") as ran:
        runner.run([SH, "-c", f"touch {marker}"], timeout_s=10, stdout=out, stderr=err)
    with pytest.raises(SandboxViolation, match="declared that it starts no process"):
        runner.start([SH, "-c", f"touch {marker}"])
    with pytest.raises(SandboxViolation, match="declared that it starts no process"):
        runner.plan(workspace)
    # The ways around the runner: an MCP stdio server's start, a terminal session's host.
    with pytest.raises(SandboxViolation, match="declared that it starts no process"):
        _stdio((SH, "-c", f"touch {marker}"), {}, runner, 10)
    with pytest.raises(SandboxViolation, match="declared that it starts no process"):
        _confinement(ToolContext.create(settings, processes=False))

    assert ran.value.target == SH
    assert not marker.exists()

"""The warm launcher: a small process that forks jailed commands for the worker."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from tests.sandbox.test_network import jail_of
from tests.sandbox.test_tracking import wait_until

from toolrun.config import Settings
from toolrun.sandbox.output import BoundedBytes
from toolrun.sandbox.runner import ProcessResult, ProcessRunner
from toolrun.sandbox.warm import LAUNCHER
from toolrun.tools import ToolContext


@pytest.fixture
def jailed(settings: Settings) -> ProcessRunner:
    return ToolContext.create(settings, jail=jail_of(settings)).runner


def run(
    runner: ProcessRunner, argv: list[str], pass_fds: tuple[int, ...] = ()
) -> tuple[ProcessResult, str, str]:
    out, err = BoundedBytes(1 << 20), BoundedBytes(1 << 16)
    ended = runner.run(argv, timeout_s=30, stdout=out, stderr=err, pass_fds=pass_fds)
    return ended, out.data().decode(), err.data().decode()


def test_a_large_command_line_is_no_problem(jailed: ProcessRunner) -> None:
    part = "é" * 60_000  # one argument may hold 128 KiB; three pass a socket message
    script = 'printf %s "$1$2$3" | wc -c'

    ended, out, _ = run(jailed, ["/bin/sh", "-c", script, "sh", part, part, part])

    assert ended.exit_code == 0
    assert int(out) == 3 * len(part.encode())


def test_a_passed_descriptor_keeps_its_number(jailed: ProcessRunner, workspace: Path) -> None:
    (workspace / "given.txt").write_text("handed over\n")
    fd = os.open(workspace / "given.txt", os.O_RDONLY)
    try:
        ended, out, _ = run(jailed, ["/bin/cat", f"/dev/fd/{fd}"], pass_fds=(fd,))
    finally:
        os.close(fd)

    assert ended.exit_code == 0
    assert out == "handed over\n"


def test_exit_codes_and_signals_come_back_as_from_popen(jailed: ProcessRunner) -> None:
    assert run(jailed, ["/bin/sh", "-c", "exit 7"])[0].exit_code == 7
    assert run(jailed, ["/bin/sh", "-c", "kill -TERM $$"])[0].exit_code == -signal.SIGTERM


def test_a_missing_program_is_refused_by_name(jailed: ProcessRunner) -> None:
    from toolrun.errors import SandboxViolation  # noqa: PLC0415

    with pytest.raises(SandboxViolation, match="cannot start /no/such: No such file"):
        run(jailed, ["/no/such"])


def test_a_launcher_that_died_is_started_again(jailed: ProcessRunner) -> None:
    run(jailed, ["/bin/true"])
    process = LAUNCHER._process
    assert process is not None
    process.kill()
    assert wait_until(lambda: process.poll() is not None)

    ended, out, _ = run(jailed, ["/bin/echo", "again"])

    assert (ended.exit_code, out) == (0, "again\n")
    assert LAUNCHER._process is not process

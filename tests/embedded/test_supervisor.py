"""The supervisor with real child processes: a child that dies is started again, a
crash loop of a required child stops the platform, an optional one is given up on."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolrun.embedded.supervisor import Supervisor, read_status

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
FAILING = [sys.executable, "-c", "raise SystemExit(3)"]


@pytest.fixture
def lines() -> list[str]:
    """What the supervisor reported (the console lines of `toolrun up`)."""
    return []


@pytest.fixture
def supervisor(tmp_path: Path, lines: list[str]) -> Iterator[Supervisor]:
    made = Supervisor(
        dict(os.environ),
        report=lines.append,
        status_path=tmp_path / "processes.json",
        backoff_s=0.05,
        max_backoff_s=0.2,
        max_exits=3,
        window_s=30,
    )
    yield made
    made.stop()


def watched(supervisor: Supervisor, until: object, timeout_s: float = 20) -> str | None:
    """Run `watch` on a thread until `until()` is true (or it returns on its own)."""
    stop = threading.Event()
    answer: list[str | None] = []
    thread = threading.Thread(target=lambda: answer.append(supervisor.watch(stop)))
    thread.start()
    deadline = time.monotonic() + timeout_s
    while thread.is_alive() and not until() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)
    stop.set()
    thread.join(10)
    return answer[0] if answer else None


def test_a_killed_child_is_started_again_and_the_status_file_says_so(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    supervisor.start("worker", SLEEPER)
    [child] = supervisor.children
    first = child.process
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)

    ended = watched(supervisor, lambda: child.restarts == 1 and child.restart_at is None)

    assert ended is None  # still running: nothing stopped the platform
    assert child.process is not None
    assert child.process.pid != first.pid
    assert child.process.poll() is None
    status = read_status(tmp_path / "processes.json")
    assert status == {
        "worker": {"pid": child.process.pid, "state": "running", "restarts": 1, "optional": False}
    }


def test_a_required_child_in_a_crash_loop_stops_the_platform(
    supervisor: Supervisor, lines: list[str]
) -> None:
    supervisor.start("api", FAILING)

    ended = watched(supervisor, lambda: False)

    assert ended == "api exited 4 times in 30 s (last exit code 3); stopping the platform"
    assert supervisor.children[0].restarts == 3
    assert lines[:3] == [
        "api exited (code 3); restarting in 0.05 s",
        "api restarted (restart 1)",
        "api exited (code 3); restarting in 0.1 s",
    ]


def test_an_optional_child_in_a_crash_loop_is_given_up_and_the_rest_go_on(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    supervisor.start("worker", SLEEPER)
    supervisor.start("flower", FAILING, optional=True)
    flower = supervisor.children[1]

    ended = watched(supervisor, lambda: flower.given_up)

    assert ended is None
    assert flower.given_up
    worker = supervisor.children[0].process
    assert worker is not None
    assert worker.poll() is None
    status = json.loads((tmp_path / "processes.json").read_text())
    assert status["flower"]["state"] == "given up"
    assert status["worker"]["state"] == "running"
    assert supervisor.exited() is None  # start-up checks ignore an optional child


def test_each_childs_output_goes_to_its_own_file_restarts_appending(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    supervisor.log_dir = tmp_path / "logs"
    talker = [sys.executable, "-c", "import sys; print('said'); sys.stderr.write('warned\\n')"]
    supervisor.start("worker read_only", talker)
    [child] = supervisor.children
    log = tmp_path / "logs" / "worker-read_only.log"
    assert supervisor.log_of(child) == log

    watched(supervisor, lambda: log.exists() and log.read_text().count("said") >= 2)

    said = log.read_text()
    assert said.count("said") >= 2  # started again, appended to the same file
    assert "warned" in said
    assert log.stat().st_mode & 0o777 == 0o600


def test_a_child_marked_stop_last_outlives_the_others(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    # The "broker" writes when it is stopped; the "worker" takes a moment to stop, and
    # notes whether the broker was still there when it did.
    broker_done = tmp_path / "broker-stopped"
    broker = (
        "import signal, sys, time, pathlib\n"
        f"def bye(*_): pathlib.Path({str(broker_done)!r}).touch(); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "time.sleep(60)\n"
    )
    seen = tmp_path / "worker-saw"
    worker = (
        "import signal, sys, time, pathlib\n"
        f"done, seen = pathlib.Path({str(broker_done)!r}), pathlib.Path({str(seen)!r})\n"
        "def bye(*_):\n"
        "    time.sleep(0.5)\n"
        "    seen.write_text(str(done.exists()))\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "time.sleep(60)\n"
    )
    supervisor.start("broker", [sys.executable, "-c", broker], stop_last=True)
    supervisor.start("worker", [sys.executable, "-c", worker])
    time.sleep(0.5)  # both have set their handlers

    supervisor.stop()

    assert seen.read_text() == "False"  # the broker was still up when the worker stopped
    assert broker_done.exists()

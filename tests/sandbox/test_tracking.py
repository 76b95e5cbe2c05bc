"""Trackers find every process of a call, including ones that left its process group."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolrun.sandbox import tracking
from toolrun.sandbox.tracking import (
    CALL_MARKER_VAR,
    CgroupTracker,
    PidsGroup,
    SweepTracker,
    Tracker,
    isolation_kind,
    kill_labelled,
    label_for,
    new_tracker,
)


def wait_until(predicate: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


@contextlib.contextmanager
def escaping_daemon(tracker: Tracker, marker: str) -> Iterator[int]:
    """`sh` double-forks a sleep into a new session; yields the sleep's pid."""
    proc = subprocess.Popen(
        ["/bin/sh", "-c", "setsid sh -c 'echo $$; exec sleep 300' </dev/null & wait"],
        env={"PATH": os.environ["PATH"], CALL_MARKER_VAR: marker},
        stdout=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=tracker.enter,  # noqa: PLW1509 - the tracker must be entered before exec
    )
    tracker.attach(proc.pid)
    try:
        assert proc.stdout is not None
        yield int(proc.stdout.readline())
    finally:
        tracker.kill_all()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        tracker.close()


@pytest.mark.parametrize("kind", ["sweep", "cgroup"])
def test_tracker_finds_and_kills_a_setsid_daemon(kind: str) -> None:
    if kind == "cgroup" and isolation_kind(use_cgroups=True) != "cgroup":
        pytest.skip("cgroup v2 is not writable here")
    marker = os.urandom(8).hex()
    tracker = new_tracker(marker, use_cgroups=kind == "cgroup")
    assert isinstance(tracker, CgroupTracker if kind == "cgroup" else SweepTracker)
    with escaping_daemon(tracker, marker) as daemon:
        assert os.getpgid(daemon) != os.getpgid(0)
        # The daemon may still be between fork and exec when first looked for.
        assert wait_until(lambda: daemon in tracker.survivors())

        tracker.kill_all()

        assert wait_until(lambda: daemon not in tracker.survivors())


# Daemons forked one after another while the tracker sweeps: enough that one sweep misses
# some every time (it did in 5 of 5 runs), bounded so that a crowded host is not swamped.
FORKING_DAEMONS = (
    "i=0; while [ $i -lt 1000 ]; do setsid sleep 300 </dev/null & i=$((i + 1)); done; wait"
)


@pytest.mark.parametrize("kind", ["sweep", "cgroup", "sweep-slower-than-the-wait"])
def test_kill_all_ends_a_process_that_keeps_forking_daemons(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An attack on a single sweep: daemons forked after /proc was listed are found by
    the next one, however long a sweep takes (a crowded host: CI once took over the
    whole wait for one sweep, and the daemons forked meanwhile outlived the call)."""
    if kind == "cgroup" and isolation_kind(use_cgroups=True) != "cgroup":
        pytest.skip("cgroup v2 is not writable here")
    if kind == "sweep-slower-than-the-wait":
        real_sweep = tracking._sweep

        def slow_sweep(needle: bytes, pgid: int | None) -> list[int]:
            found = real_sweep(needle, pgid)
            time.sleep(0.1)  # the list goes stale while the loop forks on
            return found

        monkeypatch.setattr(tracking, "_sweep", slow_sweep)
        monkeypatch.setattr(tracking, "_EMPTY_WAIT_S", 0.05)
    marker = os.urandom(8).hex()
    tracker = new_tracker(marker, use_cgroups=kind == "cgroup")
    proc = subprocess.Popen(
        ["/bin/sh", "-c", FORKING_DAEMONS],
        env={"PATH": os.environ["PATH"], CALL_MARKER_VAR: marker},
        start_new_session=True,
        preexec_fn=tracker.enter,  # noqa: PLW1509 - the tracker must be entered before exec
    )
    tracker.attach(proc.pid)
    try:
        assert wait_until(lambda: len(tracker.survivors()) > 20)

        tracker.kill_all()

        # Killed is not yet gone: the last few may take a moment to turn zombie.
        assert wait_until(lambda: tracker.survivors() == [], 2)
    finally:
        tracker.kill_all()
        proc.wait()
        tracker.close()


def test_cgroup_tracker_removes_its_group() -> None:
    if isolation_kind(use_cgroups=True) != "cgroup":
        pytest.skip("cgroup v2 is not writable here")
    tracker = new_tracker(os.urandom(8).hex(), use_cgroups=True)
    assert isinstance(tracker, CgroupTracker)
    assert tracker.group.is_dir()

    tracker.close()

    assert not tracker.group.exists()


def test_cgroup_tracker_also_closes_its_pids_group(tmp_path: Path) -> None:
    """On a host whose cgroup v2 tree has no pids controller, a v1 pids group caps the
    call as well: it is closed with the tracker, not left behind."""
    base = tracking._cgroup_base()
    if base is None:
        pytest.skip("cgroup v2 is not writable here")

    class Recorded(PidsGroup):
        closed = False

        def close(self) -> None:
            self.closed = True

    pids = Recorded(tmp_path / "pids", 5)
    tracker = CgroupTracker(os.urandom(8).hex(), base / os.urandom(8).hex(), None, pids)

    tracker.close()

    assert pids.closed
    assert not tracker.group.exists()


def test_sweep_is_used_when_cgroups_are_off() -> None:
    assert isinstance(new_tracker("x", use_cgroups=False), SweepTracker)
    assert isolation_kind(use_cgroups=False) == "sweep"


@pytest.mark.parametrize("use_cgroups", [False, True])
def test_kill_labelled_ends_what_a_killed_worker_left_behind(use_cgroups: bool) -> None:
    if use_cgroups and isolation_kind(use_cgroups=True) != "cgroup":
        pytest.skip("cgroup v2 is not writable here")
    label = label_for(f"call-{os.urandom(4).hex()}")
    marker = f"{label}-{os.urandom(4).hex()}"
    tracker = new_tracker(marker, use_cgroups=use_cgroups)
    with escaping_daemon(tracker, marker) as daemon:
        # As above: the daemon may be mid-exec, its environment unreadable, when first looked for.
        assert wait_until(lambda: daemon in tracker.survivors())

        kill_labelled(label)  # what the worker's main process does after a hard time limit

        assert wait_until(lambda: daemon not in tracker.survivors())


def test_labels_are_safe_file_names() -> None:
    label = label_for("../../etc/passwd\x00")

    assert label.isalnum()
    assert len(label) == 16


def test_killing_ends_after_two_empty_sweeps_however_slow_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A slow empty sweep is not taken as the end while the one before found a new
    process: something may have forked while it listed /proc."""
    monkeypatch.setattr(tracking, "_EMPTY_WAIT_S", 0.01)
    never = 4_194_305  # above the kernel's largest pid_max: no process has it
    sweeps = iter([[never], [], [never + 1], [], [], [never + 2]])
    calls = []

    def slow_find() -> list[int]:
        time.sleep(0.05)
        calls.append(1)
        return next(sweeps)

    tracking._kill_until_gone(slow_find)

    assert len(calls) == 5  # the sweep that found never + 1 came after an empty one


class FakeClock:
    """`tracking`'s clock: time passes only when the loop sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(tracking, "time", fake)
    return fake


NO_PID = 4_194_305  # above the kernel's largest pid_max: no process has it


def test_killing_gives_up_on_a_process_that_will_not_die(clock: FakeClock) -> None:
    """One process found sweep after sweep, however often it is killed (stuck in the
    kernel): the loop stops once `_EMPTY_WAIT_S` has passed with nothing new."""
    finds = []

    def undying() -> list[int]:
        finds.append(clock.now)
        return [NO_PID]

    tracking._kill_until_gone(undying)

    assert tracking._EMPTY_WAIT_S < clock.now < tracking._KILL_LIMIT_S
    assert len(finds) > 2


def test_killing_gives_up_after_the_limit_while_new_processes_keep_appearing(
    clock: FakeClock,
) -> None:
    """A fork loop faster than the sweeps: each finds a new process, so the wait for an
    undying one never starts; the loop still ends after `_KILL_LIMIT_S` in all."""
    finds = []

    def forking() -> list[int]:
        finds.append(clock.now)
        return [NO_PID + len(finds)]

    tracking._kill_until_gone(forking)

    assert tracking._KILL_LIMIT_S <= clock.now < tracking._KILL_LIMIT_S + 1
    assert finds[-1] > tracking._EMPTY_WAIT_S

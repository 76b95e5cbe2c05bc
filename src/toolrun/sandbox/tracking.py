"""Finding every process a call started, so that none outlives it.

Two trackers, one protocol:
- `SweepTracker`: the call's process group plus every process carrying the call's marker
  variable (daemons that setsid away), found by reading /proc. A process that both leaves
  the group and clears its environment escapes it.
- `CgroupTracker`: the sweep plus a cgroup v2 group per call, entered by the child before
  exec; `cgroup.kill` ends all of it at once, cleared environment or not. Tools run with
  the worker's uid, so a tool that writes cgroupfs itself could still move out: running
  tools under a separate uid closes that (see the roadmap).

Markers start with a label (a digest of the call id), so a worker's main process can kill
what a killed pool process left behind (`kill_labelled`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Protocol

CALL_MARKER_VAR = "TOOLRUN_CALL_MARKER"
_CGROUP_MOUNTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
_PIDS_V1_MOUNT = Path("/sys/fs/cgroup/pids")
_EMPTY_WAIT_S = 2.0
# The most the sweeps that end a call spend while each finds new processes (a fork loop
# on a crowded host); usually one sweep finds nothing and ends them at once.
_KILL_LIMIT_S = 5.0


def label_for(call_id: str) -> str:
    """A filesystem-safe label for a call: its id may hold any character."""
    return hashlib.sha256(call_id.encode()).hexdigest()[:16]


class Tracker(Protocol):
    """The processes of one call."""

    def attach(self, pid: int) -> None:
        """The call's first process started as `pid` (its own process group)."""

    def enter(self) -> None:
        """Join the call's set; runs in the child between fork and exec."""

    def join_files(self) -> list[str]:
        """The cgroup.procs files `enter` writes, for a process started elsewhere."""

    def spare(self, pid: int) -> None:
        """Leave `pid` out of the survivors (a keeper that waits to be told to go)."""

    def survivors(self) -> list[int]:
        """Pids of the call's processes still alive (zombies excluded)."""

    def kill_all(self) -> None:
        """SIGKILL every process of the call."""

    def close(self) -> None:
        """Release what tracking held (a cgroup directory)."""


class SweepTracker:
    """Process group plus marker variable, found by reading /proc; with a `pids` group
    (cgroup v1's pids controller) capping how many processes the call may have."""

    def __init__(self, marker: str, pids: PidsGroup | None = None) -> None:
        self._needle = f"{CALL_MARKER_VAR}={marker}".encode()
        self._pgid: int | None = None
        self._pids = pids
        self._spared: set[int] = set()

    def attach(self, pid: int) -> None:
        self._pgid = pid

    def spare(self, pid: int) -> None:
        self._spared.add(pid)

    def enter(self) -> None:
        # The process group comes from start_new_session, the marker from the env.
        if self._pids is not None:
            self._pids.enter()

    def join_files(self) -> list[str]:
        return [] if self._pids is None else [str(self._pids.group / "cgroup.procs")]

    def survivors(self) -> list[int]:
        found = set(_sweep(self._needle, self._pgid))
        if self._pids is not None:
            found |= set(self._pids.members())
        return sorted(found - self._spared)

    def kill_all(self) -> None:
        _kill_until_gone(self.survivors)

    def close(self) -> None:
        if self._pids is not None:
            self._pids.close()


class PidsGroup:
    """A cgroup v1 pids group of one call: hosts whose cgroup v2 tree has no pids
    controller (a hybrid layout) still cap a fork bomb this way."""

    def __init__(self, group: Path, max_processes: int) -> None:
        self.group = group
        group.mkdir()
        try:
            (group / "pids.max").write_text(str(max_processes))
        except OSError:
            group.rmdir()
            raise

    def enter(self) -> None:
        with open(self.group / "cgroup.procs", "w") as procs:
            procs.write("0")

    def members(self) -> list[int]:
        return _members(self.group)

    def close(self) -> None:
        self.close_group(self.group)

    @staticmethod
    def close_group(group: Path) -> None:
        _kill(_members(group))
        with contextlib.suppress(OSError):
            group.rmdir()


class CgroupTracker(SweepTracker):
    """The sweep, plus one cgroup v2 directory per call."""

    def __init__(
        self, marker: str, group: Path, max_processes: int | None, pids: PidsGroup | None
    ) -> None:
        super().__init__(marker, pids)
        self.group = group
        group.mkdir()
        if max_processes is not None and (group / "pids.max").exists():
            try:
                (group / "pids.max").write_text(str(max_processes))
            except OSError:
                group.rmdir()
                raise

    def enter(self) -> None:
        with open(self.group / "cgroup.procs", "w") as procs:
            procs.write("0")
        super().enter()

    def join_files(self) -> list[str]:
        return [str(self.group / "cgroup.procs"), *super().join_files()]

    def survivors(self) -> list[int]:
        return sorted((set(_members(self.group)) - self._spared) | set(super().survivors()))

    def kill_all(self) -> None:
        _kill_group(self.group)
        super().kill_all()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.group.rmdir()
        super().close()  # a cgroup v1 pids group, on a host whose v2 tree has no pids


def new_tracker(marker: str, *, use_cgroups: bool, max_processes: int | None = None) -> Tracker:
    """A cgroup tracker where this host lets us create and enter cgroups, else a sweep;
    either capped at `max_processes` where a pids controller can be used."""
    base = _cgroup_base() if use_cgroups else None
    pids = None
    if use_cgroups and max_processes is not None and not _has_pids(base):
        pids = _pids_group(marker, max_processes)
    if base is not None:
        with contextlib.suppress(OSError):
            return CgroupTracker(marker, base / marker, max_processes, pids)
    return SweepTracker(marker, pids)


def _has_pids(base: Path | None) -> bool:
    return base is not None and "pids" in _read_text(base / "cgroup.subtree_control").split()


def _pids_group(marker: str, max_processes: int) -> PidsGroup | None:
    base = _pids_v1_base()
    if base is None:
        return None
    with contextlib.suppress(OSError):
        return PidsGroup(base / marker, max_processes)
    return None


@cache
def _pids_v1_base() -> Path | None:
    """A directory of cgroup v1's pids hierarchy this process may create groups in."""
    mount = _PIDS_V1_MOUNT
    if not (mount / "cgroup.procs").exists() or (mount / "cgroup.controllers").exists():
        return None
    own = "/"
    for line in _read_text(Path("/proc/self/cgroup")).splitlines():
        _number, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            own = path
    base = mount / own.lstrip("/") / "toolrun"
    with contextlib.suppress(OSError):
        base.mkdir(exist_ok=True)
        if (base / "pids.max").exists():
            return base
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def kill_labelled(label: str) -> None:
    """Kill every process (and cgroup) of calls whose marker starts with `label`."""
    base = _cgroup_base()
    if base is not None:
        for group in base.glob(f"{label}-*"):
            _kill_group(group)
            with contextlib.suppress(OSError):
                group.rmdir()
    pids_base = _pids_v1_base()
    if pids_base is not None:
        for group in pids_base.glob(f"{label}-*"):
            PidsGroup.close_group(group)
    needle = f"{CALL_MARKER_VAR}={label}-".encode()
    _kill_until_gone(lambda: _sweep(needle, None))


def isolation_kind(*, use_cgroups: bool) -> str:
    """'cgroup' or 'sweep': how this process finds a call's processes (for health reports)."""
    return "cgroup" if use_cgroups and _cgroup_base() is not None else "sweep"


@cache
def _cgroup_base() -> Path | None:
    """A cgroup v2 directory this process may create groups in and move processes into."""
    own = _own_cgroup()
    for mount in _CGROUP_MOUNTS:
        if not (mount / "cgroup.controllers").exists():
            continue
        base = mount / own.lstrip("/") / "toolrun"
        with contextlib.suppress(OSError):
            base.mkdir(exist_ok=True)
            with contextlib.suppress(OSError):  # only where the parent delegates pids
                (base / "cgroup.subtree_control").write_text("+pids")
            if (base / "cgroup.kill").exists() and _can_enter(base):
                return base
    return None


def _can_enter(base: Path) -> bool:
    """Move a short-lived child into a probe group: some hosts allow mkdir but not this."""
    probe = base / f"probe-{os.getpid()}"
    try:
        probe.mkdir(exist_ok=True)
        procs = probe / "cgroup.procs"
        subprocess.run(
            ["/bin/true"],
            check=True,
            preexec_fn=lambda: procs.write_text("0"),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()
    return True


def _own_cgroup() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    return "/"


def _members(group: Path) -> list[int]:
    try:
        pids = [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []
    return [pid for pid in pids if not _zombie_or_gone(pid)]


def _kill_group(group: Path) -> None:
    with contextlib.suppress(OSError):
        (group / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + _EMPTY_WAIT_S
    while _members(group) and time.monotonic() < deadline:
        time.sleep(0.001)  # a dying process leaves within a millisecond or two


def _sweep(needle: bytes, pgid: int | None) -> list[int]:
    """Live pids in process group `pgid` or whose environment contains `needle`.

    Reads /proc directly: psutil costs about 0.3 ms a process, this about 10 µs.
    """
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            pid = int(name)
            mine = os.getpgid(pid) == pgid or needle in _read(name, "environ")
            if mine and not _is_zombie(name):
                found.append(pid)
    return found


def _kill_until_gone(find: Callable[[], list[int]]) -> None:
    """Kill what `find` finds until it finds nothing twice in a row; nothing found at
    first ends it at once.

    One sweep is not enough: a process forked after /proc was listed, or one mid-exec
    whose environment cannot be read for a moment, is missed by it and found by a later
    one. While sweeps keep finding new processes it goes on, however long a sweep takes
    (a host crowded by a fork loop); it gives up when sweeps have found only processes
    already killed for `_EMPTY_WAIT_S` (one that does not die), or after `_KILL_LIMIT_S`
    in all. A process that may not be signalled is not tried again.
    """
    started = last_new = time.monotonic()
    signalled: set[int] = set()
    refused: set[int] = set()
    pause = 0.001  # a killed process turns zombie within a millisecond or two
    empty = 0
    while time.monotonic() - started < _KILL_LIMIT_S:
        pids = [pid for pid in find() if pid not in refused]
        if not pids:
            if not signalled or empty:
                return
            empty += 1
        else:
            empty = 0
            refused |= _kill(pids)
            if not signalled.issuperset(pids):
                signalled.update(pids)
                last_new, pause = time.monotonic(), 0.001
            elif time.monotonic() - last_new > _EMPTY_WAIT_S:
                return
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _kill(pids: list[int]) -> set[int]:
    """SIGKILL `pids`; returns those this process may not signal."""
    refused = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        except PermissionError:
            refused.add(pid)
    return refused


def _zombie_or_gone(pid: int) -> bool:
    try:
        return _is_zombie(str(pid))
    except OSError:
        return True


def _is_zombie(pid: str) -> bool:
    stat = _read(pid, "stat")
    end = stat.rindex(b")")
    return stat[end + 2 : end + 3] == b"Z"


def _read(pid: str, entry: str) -> bytes:
    with open(f"/proc/{pid}/{entry}", "rb") as handle:
        return handle.read()

"""CPU time and peak memory of a call: this process plus every process it started."""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil

_SAMPLE_EVERY_S = 0.02


@dataclass
class Usage:
    """Filled in when the measured block ends."""

    cpu_s: float = 0.0
    peak_rss_bytes: int = 0


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    with contextlib.suppress(psutil.Error):
        total = process.memory_info().rss
        for child in _descendants(process):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
    return total


def _descendants(process: psutil.Process) -> list[psutil.Process]:
    """The process's descendants, from the kernel's per-thread child lists: a few small
    reads, where psutil's `children` reads the status of every process on the host."""
    if not _CHILD_LISTS:
        return process.children(recursive=True)
    found: list[psutil.Process] = []
    parents = [process.pid]
    while parents:
        parent = parents.pop()
        with contextlib.suppress(OSError):
            for task in os.scandir(f"/proc/{parent}/task"):
                with contextlib.suppress(OSError), open(f"{task.path}/children") as listed:
                    for pid in map(int, listed.read().split()):
                        parents.append(pid)
                        with contextlib.suppress(psutil.Error):
                            found.append(psutil.Process(pid))
    return found


# Linux with CONFIG_PROC_CHILDREN: /proc/<pid>/task/<tid>/children.
_CHILD_LISTS = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


class _TreeSampler:
    """One thread per process that walks the process tree every 20 ms while a call runs.

    A call shorter than that costs two reads of this process's own RSS and no thread
    start; a tree walk scans all of /proc, too slow to do on every call.
    """

    def __init__(self) -> None:
        self._active = threading.Event()
        self._owner_pid = 0
        self.peak_rss_bytes = 0

    def begin(self, baseline: int) -> None:
        self.peak_rss_bytes = baseline
        if self._owner_pid != os.getpid():  # first use, or a fork: this process has no thread
            self._owner_pid = os.getpid()
            threading.Thread(target=self._loop, args=(psutil.Process(),), daemon=True).start()
        self._active.set()

    def end(self) -> None:
        self._active.clear()

    def _loop(self, me: psutil.Process) -> None:
        while self._active.wait():
            time.sleep(_SAMPLE_EVERY_S)
            if self._active.is_set():
                self.peak_rss_bytes = max(self.peak_rss_bytes, _tree_rss(me))


_sampler = _TreeSampler()


@contextlib.contextmanager
def measure(*, tree: bool = True) -> Iterator[Usage]:
    """Measure the block: CPU seconds (rusage of this process and its reaped children) and
    the peak resident memory of the process tree (`tree=False`: of this process alone, for
    a block that starts no process; no sampling thread wakes for it).
    """
    usage = Usage()
    before = _own_rss()
    if tree:
        _sampler.begin(before)
    started = _cpu_s()
    try:
        yield usage
    finally:
        if tree:
            _sampler.end()
        usage.cpu_s = round(_cpu_s() - started, 6)
        sampled = _sampler.peak_rss_bytes if tree else before
        usage.peak_rss_bytes = max(sampled, _own_rss())


_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


class _Statm:
    """/proc/self/statm, kept open by this process (a forked child opens its own, or it
    would read its parent's); read with pread, so threads share it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd = -1
        self._pid = 0

    def fd(self) -> int:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    if self._fd >= 0:  # the parent's, inherited: this process reads its own
                        os.close(self._fd)
                    self._fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
                    self._pid = os.getpid()
        return self._fd


_statm = _Statm()


def _own_rss() -> int:
    """This process's resident memory: one read of /proc/self/statm, kept open (psutil's
    way, without building a Process object or opening the file on every call)."""
    try:
        return int(os.pread(_statm.fd(), 256, 0).split()[1]) * _PAGE_BYTES
    except OSError:
        return int(psutil.Process().memory_info().rss)

"""CPU time and peak memory of a call: this process plus every process it started."""

from __future__ import annotations

import contextlib
import os
import resource
import threading
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
        for child in process.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
    return total


@contextlib.contextmanager
def measure() -> Iterator[Usage]:
    """Measure the block: CPU seconds (rusage of this process and its reaped children) and
    the peak resident memory of the process tree.

    The tree is sampled every 20 ms by a thread; a call shorter than that costs two reads
    of this process's own RSS and nothing else (a tree walk scans all of /proc).
    """
    me = psutil.Process(os.getpid())
    usage = Usage(peak_rss_bytes=me.memory_info().rss)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(_SAMPLE_EVERY_S):
            usage.peak_rss_bytes = max(usage.peak_rss_bytes, _tree_rss(me))

    sampler = threading.Thread(target=sample, daemon=True)
    started = _cpu_s()
    sampler.start()
    try:
        yield usage
    finally:
        stop.set()
        sampler.join()
        usage.cpu_s = round(_cpu_s() - started, 6)
        usage.peak_rss_bytes = max(usage.peak_rss_bytes, me.memory_info().rss)

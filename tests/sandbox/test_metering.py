"""Per-call CPU time and peak memory, over the process tree."""

from __future__ import annotations

import subprocess
import sys

from tests.forked import in_forked_child

from toolrun.sandbox.metering import measure


def test_cpu_time_of_a_busy_block_is_counted() -> None:
    with measure() as usage:
        total = 0
        for number in range(2_000_000):
            total += number
    assert usage.cpu_s > 0.01
    assert usage.peak_rss_bytes > 10_000_000


def test_a_child_that_allocates_raises_the_peak() -> None:
    with measure() as idle:
        pass
    allocate = "x = bytearray(300 * 1024 * 1024); import time; time.sleep(0.3)"

    with measure() as busy:
        subprocess.run([sys.executable, "-c", allocate], check=True)

    assert busy.peak_rss_bytes > idle.peak_rss_bytes + 200 * 1024 * 1024
    assert busy.cpu_s > 0  # the child's CPU is counted once it is reaped


def test_a_block_that_starts_no_process_sees_its_own_memory_grow() -> None:
    with measure(tree=False) as idle:
        pass
    with measure(tree=False) as grown:
        block = bytearray(120 * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])  # touched: resident
    del block
    assert grown.peak_rss_bytes > idle.peak_rss_bytes + 100 * 1024 * 1024


def test_a_forked_process_measures_its_own_memory_not_its_parents() -> None:
    with measure(tree=False) as parent:  # the kept /proc/self/statm is the parent's now
        pass

    def in_child() -> str:
        with measure(tree=False) as idle:
            pass
        with measure(tree=False) as grown:
            block = bytearray(200 * 1024 * 1024)
            block[::4096] = b"x" * len(block[::4096])
        return f"{idle.peak_rss_bytes} {grown.peak_rss_bytes}"

    idle, grown = map(int, in_forked_child(in_child).split())
    with measure(tree=False) as after:
        pass
    # Read from the parent's file, the child would see no growth of its own.
    assert grown > idle + 150 * 1024 * 1024
    assert after.peak_rss_bytes < parent.peak_rss_bytes + 100 * 1024 * 1024

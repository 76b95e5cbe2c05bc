"""Per-call CPU time and peak memory, over the process tree."""

from __future__ import annotations

import subprocess
import sys

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

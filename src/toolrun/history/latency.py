"""Execution times as log-scale histograms: mergeable, small, and percentiles within 2.2 %.

A time `ms` falls in bin ``floor(16 * log2(ms))``; a bin spans a factor of 2^(1/16), and
its geometric middle is within 2^(1/32) (2.2 %) of every time in it. Histograms are dicts
``{bin: count}`` that merge by adding counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

BINS_PER_DOUBLING = 16
SMALLEST_MS = 0.001  # times at or below this share one bin
_FLOOR_BIN = math.floor(BINS_PER_DOUBLING * math.log2(SMALLEST_MS))


def bin_of(ms: float) -> int:
    """The bin of an execution time in milliseconds."""
    if ms <= SMALLEST_MS:
        return _FLOOR_BIN
    return math.floor(BINS_PER_DOUBLING * math.log2(ms))


def middle_of(bin_: int) -> float:
    """The geometric middle of a bin, in milliseconds."""
    return float(2 ** ((bin_ + 0.5) / BINS_PER_DOUBLING))


def merge(into: dict[int, int], other: Mapping[int, int]) -> None:
    """Add `other`'s counts to `into`."""
    for bin_, count in other.items():
        into[bin_] = into.get(bin_, 0) + count


def percentile(histogram: Mapping[int, int], q: float, *, low: float, high: float) -> float | None:
    """The nearest-rank `q` quantile (0 < q <= 1), clamped to the exact [low, high] range
    of the times counted; None for an empty histogram."""
    total = sum(histogram.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for bin_ in sorted(histogram):
        seen += histogram[bin_]
        if seen >= rank:
            return min(max(middle_of(bin_), low), high)
    return high  # not reached: the counts add up to total


def histogram_of(times_ms: Iterable[float]) -> dict[int, int]:
    """The histogram of some execution times."""
    histogram: dict[int, int] = {}
    for ms in times_ms:
        bin_ = bin_of(ms)
        histogram[bin_] = histogram.get(bin_, 0) + 1
    return histogram

"""Log-scale latency histograms: percentiles within 2.2 % of the exact nearest rank."""

from __future__ import annotations

import math
import random

import pytest

from toolrun.history import latency


def exact(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("q", [0.5, 0.95, 0.99])
def test_percentiles_are_within_the_bin_error(seed: int, q: float) -> None:
    rng = random.Random(seed)  # noqa: S311 - test data
    times = [rng.lognormvariate(3, 1.5) for _ in range(2000)]

    estimate = latency.percentile(latency.histogram_of(times), q, low=min(times), high=max(times))

    assert estimate is not None
    assert abs(estimate - exact(times, q)) <= exact(times, q) * (2 ** (1 / 32) - 1) + 1e-9


def test_merged_histograms_count_like_one() -> None:
    a, b = [1.0, 2.0, 3.0], [100.0, 200.0]
    merged = latency.histogram_of(a)
    latency.merge(merged, latency.histogram_of(b))

    assert merged == latency.histogram_of(a + b)


def test_tiny_times_share_a_bin_and_estimates_stay_in_range() -> None:
    histogram = latency.histogram_of([0.0, 0.0001, 0.001])

    assert len(histogram) == 1
    assert latency.percentile(histogram, 0.5, low=0.0, high=0.001) == pytest.approx(0.001, rel=0.01)
    assert latency.percentile({}, 0.5, low=0, high=0) is None

"""Prometheus metric families built from a Snapshot (a collector for a per-request registry)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from toolrun.monitoring.snapshot import Snapshot


class PlatformCollector(Collector):
    """The platform's metrics as of `snapshot`, plus the approval inbox's backlog."""

    def __init__(self, snapshot: Snapshot, *, approvals_pending: int) -> None:
        self.snapshot = snapshot
        self.approvals_pending = approvals_pending

    def collect(self) -> Iterator[Metric]:
        calls = CounterMetricFamily(
            "toolrun_calls",
            "Calls that ended, by tool and final status (success, error, timeout, blocked, "
            "denied, cancelled), counted by the worker or API process that ended them.",
            labels=["tool", "status"],
        )
        for (tool, status), count in sorted(self.snapshot.calls.items()):
            calls.add_metric([tool, status], count)
        yield calls

        duration = HistogramMetricFamily(
            "toolrun_call_duration_seconds",
            "Execution time of calls that ran on a worker, by tool.",
            labels=["tool"],
        )
        for tool, histogram in sorted(self.snapshot.durations.items()):
            duration.add_metric([tool], histogram.cumulative(), sum_value=histogram.sum)
        yield duration

        depth = GaugeMetricFamily(
            "toolrun_queue_depth",
            "Messages waiting in each permission level's queue, and in the task tool's "
            "(delegation), not yet taken by a worker.",
            labels=["level"],
        )
        for label, waiting in self.snapshot.queue_depths.items():
            depth.add_metric([label], waiting)
        yield depth

        yield GaugeMetricFamily(
            "toolrun_approvals_pending",
            "Calls waiting in the approval inbox for an operator's decision.",
            value=self.approvals_pending,
        )

"""Metrics by OTLP: off unless OpenTelemetry's variables ask (and then the SDK is not even
imported); on, the instruments report what /metrics reports, family by family, with the
same names and labels, histograms included. (End to end, against a real platform and an
OTLP receiver: tests/integration/test_otlp_metrics.py.)"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import redis
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Histogram,
    HistogramDataPoint,
    InMemoryMetricReader,
    Metric,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    Sum,
)
from opentelemetry.sdk.resources import Resource

from toolrun.config import Settings
from toolrun.monitoring import PlatformCollector, Snapshot, otlp_metrics
from toolrun.monitoring._otel_metrics import SCOPE, Latest, WithHistograms, observe
from toolrun.monitoring.metrics import BUCKETS
from toolrun.monitoring.snapshot import Durations, Workers

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("environment", "exporters"),
    [
        ({}, ()),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, ("otlp",)),
        ({"OTEL_METRICS_EXPORTER": "otlp"}, ("otlp",)),
        ({"OTEL_METRICS_EXPORTER": "otlp, Console"}, ("otlp", "console")),
        ({"OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ()),
        ({"OTEL_METRICS_EXPORTER": "prometheus", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ()),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ()),
        # Traces off does not turn metrics off, nor the reverse.
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ("otlp",)),
    ],
)
def test_the_otel_variables_decide_whether_metrics_are_exported(
    no_otel: None,
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    exporters: tuple[str, ...],
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    assert Settings().metric_exporters == exporters


def test_the_protocol_and_interval_come_from_the_otel_variables(
    no_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings().otlp_metrics_protocol == "http/protobuf"
    assert Settings().otel_metric_export_interval_ms == 60000
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "500")
    assert Settings().otlp_metrics_protocol == "grpc"
    assert Settings().otel_metric_export_interval_ms == 500
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
    assert Settings().otlp_metrics_protocol == "http/protobuf"


def durations(*seconds: float) -> Durations:
    histogram = Durations(sum=sum(seconds))
    for value in seconds:
        label = next((repr(float(b)) for b in BUCKETS if value <= b), "+Inf")
        histogram.buckets[label] += 1
    return histogram


SNAPSHOT = Snapshot(
    calls={("read", "success"): 3, ("bash", "error"): 1},
    durations={"read": durations(0.003, 0.2, 0.2), "bash": durations(400.0)},
    queue_depths={"read_only": 2, "execute": 0},
    queue_waits={"read_only": durations(0.02)},
    workers={"read_only": Workers(alive=1, slots=2, lost=1)},
    agents_queued={"a1": 1},
    agents_in_flight={"a1": 2},
    throttled={("a1", "rate_per_s"): 4},
)


def collector() -> PlatformCollector:
    return PlatformCollector(
        SNAPSHOT,
        approvals_pending=5,
        oldest_pending_s=90.0,
        agent_names={"a1": "alice"},
        queue_bound=100,
        process_restarts={"api": 1},
    )


@pytest.fixture
def latest() -> Latest:
    read = Latest()
    read.update(collector().collect())
    return read


@pytest.fixture
def reader(latest: Latest) -> Iterator[InMemoryMetricReader]:
    """The SDK's in-memory reader of a provider whose instruments observe `latest`."""
    found = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[found], shutdown_on_exit=False)
    observe(provider.get_meter(SCOPE.name, SCOPE.version), latest)
    yield found
    provider.shutdown()


def metrics_of(data: MetricsData | None) -> dict[str, Metric]:
    assert data is not None
    return {
        metric.name: metric
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


def points(metric: Metric) -> dict[tuple[tuple[str, Any], ...], Any]:
    """A metric's values by attributes (a histogram's: the whole point)."""
    found: dict[tuple[tuple[str, Any], ...], Any] = {}
    for point in metric.data.data_points:
        key = tuple(sorted((point.attributes or {}).items()))
        found[key] = point if isinstance(point, HistogramDataPoint) else point.value  # type: ignore[union-attr]
    return found


def test_the_counters_and_gauges_report_what_the_snapshot_holds(
    reader: InMemoryMetricReader,
) -> None:
    metrics = metrics_of(reader.get_metrics_data())

    calls = metrics["toolrun_calls"]
    assert isinstance(calls.data, Sum)
    assert calls.data.is_monotonic
    assert calls.data.aggregation_temporality == AggregationTemporality.CUMULATIVE
    assert points(calls) == {
        (("status", "success"), ("tool", "read")): 3,
        (("status", "error"), ("tool", "bash")): 1,
    }
    assert points(metrics["toolrun_calls_throttled"]) == {
        (("agent", "alice"), ("quota", "rate_per_s")): 4
    }
    assert points(metrics["toolrun_queue_depth"]) == {
        (("level", "read_only"),): 2,
        (("level", "execute"),): 0,
    }
    assert points(metrics["toolrun_workers"]) == {(("level", "read_only"),): 1}
    assert points(metrics["toolrun_worker_slots"]) == {(("level", "read_only"),): 2}
    assert points(metrics["toolrun_workers_lost"]) == {(("level", "read_only"),): 1}
    assert points(metrics["toolrun_agent_calls_queued"]) == {(("agent", "alice"),): 1}
    assert points(metrics["toolrun_agent_calls_in_flight"]) == {(("agent", "alice"),): 2}
    assert points(metrics["toolrun_approvals_pending"]) == {(): 5}
    assert points(metrics["toolrun_approvals_oldest_pending_seconds"]) == {(): 90.0}
    assert metrics["toolrun_approvals_oldest_pending_seconds"].unit == "s"
    assert points(metrics["toolrun_process_restarts"]) == {(("process", "api"),): 1}
    assert points(metrics["toolrun_queue_bound"]) == {(): 100}
    assert (metrics["toolrun_calls"].description or "").startswith("Calls that ended")


def test_a_new_reading_replaces_the_last_and_none_reports_nothing(
    reader: InMemoryMetricReader, latest: Latest
) -> None:
    latest.update(
        PlatformCollector(Snapshot(calls={("read", "success"): 7}), approvals_pending=0).collect()
    )
    assert points(metrics_of(reader.get_metrics_data())["toolrun_calls"]) == {
        (("status", "success"), ("tool", "read")): 7
    }

    latest.update(())  # Redis away

    assert reader.get_metrics_data() is None


class Kept(MetricExporter):
    """An exporter that keeps what it is given."""

    def __init__(self) -> None:
        super().__init__(preferred_temporality={Histogram: AggregationTemporality.CUMULATIVE})
        self.batches: list[MetricsData] = []

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.batches.append(metrics_data)
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


def bounds_and_counts(point: HistogramDataPoint) -> tuple[Sequence[float], Sequence[int]]:
    return point.explicit_bounds, point.bucket_counts


def test_the_histograms_are_added_to_each_export_with_the_same_buckets(
    reader: InMemoryMetricReader, latest: Latest
) -> None:
    kept = Kept()
    exporter = WithHistograms(kept, latest, Resource.create({"service.name": "toolrun-api"}))
    collected = reader.get_metrics_data()
    assert collected is not None

    assert exporter.export(collected) == MetricExportResult.SUCCESS

    [batch] = kept.batches
    [resource] = batch.resource_metrics
    [scope] = resource.scope_metrics  # the histograms join the instruments' scope
    assert scope.scope.name == "toolrun"
    metrics = metrics_of(batch)
    assert set(metrics) == {family.name for family in collector().collect()}
    duration = metrics["toolrun_call_duration_seconds"]
    assert isinstance(duration.data, Histogram)
    assert duration.data.aggregation_temporality == AggregationTemporality.CUMULATIVE
    assert duration.unit == "s"
    read = points(duration)[(("tool", "read"),)]
    assert list(read.explicit_bounds) == [float(bound) for bound in BUCKETS]
    counts = dict(zip([*BUCKETS, "+Inf"], read.bucket_counts, strict=True))
    assert counts[0.005] == 1
    assert counts[0.25] == 2
    assert sum(read.bucket_counts) == read.count == 3
    assert read.sum == pytest.approx(0.403)
    bash = points(duration)[(("tool", "bash"),)]
    assert bash.bucket_counts[-1] == bash.count == 1  # past the last bound: +Inf
    wait = points(metrics["toolrun_queue_wait_seconds"])[(("level", "read_only"),)]
    assert wait.count == 1
    assert exporter._preferred_temporality == kept._preferred_temporality


def test_reading_goes_on_after_a_failure_and_reports_nothing_meanwhile(
    caplog: pytest.LogCaptureFixture,
) -> None:
    latest = Latest()
    latest.update(collector().collect())
    families_before: list[int] = []  # how many families `latest` held before each read

    async def read() -> PlatformCollector:
        families_before.append(len(latest.families))
        if len(families_before) <= 2:
            raise redis.ConnectionError("away")
        if len(families_before) == 3:
            return collector()
        raise asyncio.CancelledError  # ends the loop, as the API's shutdown does

    with caplog.at_level(logging.WARNING), pytest.raises(asyncio.CancelledError):
        asyncio.run(otlp_metrics.keep_reading(latest, read, interval_s=0))

    every = len(list(collector().collect()))
    assert families_before == [every, 0, 0, every]
    warned = [r for r in caplog.records if "not read" in r.getMessage()]
    assert len(warned) == 1  # once for the streak of failures


# In a fresh interpreter with no OTEL_* variable: the API's start of the export.
OFF = """
import json, sys
from toolrun.config import Settings
from toolrun.monitoring import otlp_metrics
started = otlp_metrics.start(Settings(), redis=None, inbox=None, agents=None)
print(json.dumps({
    "started": started is not None,
    "sdk": sorted(m for m in sys.modules if m.startswith(("toolrun.monitoring._otel",
        "opentelemetry.exporter"))),
}))
"""


def test_off_nothing_starts_and_the_sdk_is_not_imported() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", OFF],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"started": False, "sdk": []}

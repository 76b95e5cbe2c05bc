"""OpenTelemetry's side of `otlp_metrics`, imported only once metrics by OTLP are on: the
families of /metrics as observable instruments, and their histograms added to each export.

Every family keeps its Prometheus name and labels (as attributes). A counter is an
observable counter, a gauge an observable gauge, each observing the latest reading.
OpenTelemetry has no observable histogram, and toolrun's histograms are cumulative bucket
counts kept in Redis, not observations this process could record: `WithHistograms` adds
them, as cumulative OTLP histograms with the same bounds, to what the SDK collected before
it is exported.
"""

# ruff: noqa: PLC0415 - an exporter is imported only when it is asked for
from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from time import time_ns
from typing import Any

from opentelemetry.metrics import CallbackOptions, Meter, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    ConsoleMetricExporter,
    Histogram,
    HistogramDataPoint,
    Metric,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from prometheus_client.core import Metric as Family

from toolrun import __version__
from toolrun.monitoring.collector import PlatformCollector
from toolrun.monitoring.snapshot import Snapshot

log = logging.getLogger(__name__)
SCOPE = InstrumentationScope("toolrun", __version__)
Observer = Callable[[CallbackOptions], Iterable[Observation]]


class Latest:
    """The families /metrics would serve as last read; none while they cannot be read."""

    def __init__(self) -> None:
        self.families: dict[str, Family] = {}

    def update(self, families: Iterable[Family]) -> None:
        self.families = {family.name: family for family in families}


def observe(meter: Meter, latest: Latest) -> None:
    """An observable instrument on `meter` for each counter and gauge family of /metrics."""
    empty = PlatformCollector(Snapshot(), approvals_pending=0)
    for family in empty.collect():
        unit, about = _unit(family.name), family.documentation
        if family.type == "counter":
            reads = _observer(latest, family.name, f"{family.name}_total")
            meter.create_observable_counter(family.name, [reads], unit, about)
        elif family.type == "gauge":
            reads = _observer(latest, family.name, family.name)
            meter.create_observable_gauge(family.name, [reads], unit, about)


def _observer(latest: Latest, name: str, sample: str) -> Observer:
    def observed(options: CallbackOptions) -> Iterable[Observation]:
        family = latest.families.get(name)
        if family is None:
            return []
        return [Observation(s.value, s.labels) for s in family.samples if s.name == sample]

    return observed


def _unit(name: str) -> str:
    return "s" if name.endswith("_seconds") else ""


@dataclass
class _Series:
    labels: dict[str, str]
    buckets: list[tuple[float, int]] = field(default_factory=list)  # (le, cumulative count)
    sum: float = 0.0


def histograms(families: Iterable[Family], start_ns: int, now_ns: int) -> list[Metric]:
    """The histogram families as cumulative OTLP histograms, counted since `start_ns`."""
    found = []
    for family in families:
        if family.type != "histogram":
            continue
        points = [_point(series, start_ns, now_ns) for series in _series(family)]
        temporality = AggregationTemporality.CUMULATIVE
        found.append(
            Metric(
                name=family.name,
                description=family.documentation,
                unit=_unit(family.name),
                data=Histogram(data_points=points, aggregation_temporality=temporality),
            )
        )
    return found


def _series(family: Family) -> Iterable[_Series]:
    """A histogram family's series, one per label set (`le` aside)."""
    by_labels: dict[tuple[tuple[str, str], ...], _Series] = {}
    for sample in family.samples:
        labels = {k: v for k, v in sample.labels.items() if k != "le"}
        series = by_labels.setdefault(tuple(sorted(labels.items())), _Series(labels))
        if sample.name == f"{family.name}_bucket":
            series.buckets.append((float(sample.labels["le"]), int(sample.value)))
        elif sample.name == f"{family.name}_sum":
            series.sum = sample.value
    return by_labels.values()


def _point(series: _Series, start_ns: int, now_ns: int) -> HistogramDataPoint:
    bounds, counts, below = [], [], 0
    for le, cumulative in sorted(series.buckets):
        if not math.isinf(le):
            bounds.append(le)
        counts.append(cumulative - below)
        below = cumulative
    return HistogramDataPoint(
        attributes=series.labels,
        start_time_unix_nano=start_ns,
        time_unix_nano=now_ns,
        count=below,
        sum=series.sum,
        bucket_counts=counts,
        explicit_bounds=bounds,
        # OTLP's min and max are optional: Redis keeps buckets, not the extremes.
        min=None,  # type: ignore[arg-type]
        max=None,  # type: ignore[arg-type]
    )


class WithHistograms(MetricExporter):
    """`exporter`, with the latest histograms added to every batch it is given."""

    def __init__(self, exporter: MetricExporter, latest: Latest, resource: Resource) -> None:
        # The periodic reader asks its exporter which temporality it prefers.
        super().__init__(
            preferred_temporality=exporter._preferred_temporality,
            preferred_aggregation=exporter._preferred_aggregation,
        )
        self.exporter, self.latest, self.resource = exporter, latest, resource
        self.started_ns = time_ns()

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        added = histograms(self.latest.families.values(), self.started_ns, time_ns())
        if added:
            metrics_data = self._with(metrics_data, added)
        return self.exporter.export(metrics_data, timeout_millis=timeout_millis, **kwargs)

    def _with(self, data: MetricsData, added: list[Metric]) -> MetricsData:
        ours, *others = data.resource_metrics or [ResourceMetrics(self.resource, [], "")]
        scopes = list(ours.scope_metrics)
        at = next((i for i, s in enumerate(scopes) if s.scope.name == SCOPE.name), None)
        if at is None:
            scopes.append(ScopeMetrics(scope=SCOPE, metrics=added, schema_url=""))
        else:
            scopes[at] = replace(scopes[at], metrics=[*scopes[at].metrics, *added])
        return MetricsData(resource_metrics=[replace(ours, scope_metrics=scopes), *others])

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.exporter.shutdown(timeout_millis=timeout_millis, **kwargs)


def meter_provider(
    exporters: Sequence[str], latest: Latest, *, protocol: str, interval_ms: float, service: str
) -> MeterProvider:
    """A provider exporting what `latest` holds every `interval_ms` through `exporters`
    ("otlp", "console"), as `service`; not the global one, so that no library's own
    instruments ride along."""
    resource = Resource.create({"service.name": service, "service.version": __version__})
    readers = [
        PeriodicExportingMetricReader(
            WithHistograms(exporter, latest, resource), export_interval_millis=interval_ms
        )
        for exporter in filter(None, (_exporter(name, protocol) for name in exporters))
    ]
    provider = MeterProvider(metric_readers=readers, resource=resource, shutdown_on_exit=False)
    observe(provider.get_meter(SCOPE.name, SCOPE.version), latest)
    return provider


def _exporter(name: str, protocol: str) -> MetricExporter | None:
    """The SDK's exporter called `name`; it reads its endpoint, headers, timeout and
    temporality from the OTEL_EXPORTER_OTLP_* variables itself."""
    if name == "console":
        return ConsoleMetricExporter()
    if name != "otlp":
        log.warning("OTEL_METRICS_EXPORTER %r is not one toolrun knows (otlp, console)", name)
        return None
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (  # type: ignore[import-not-found, unused-ignore]
                OTLPMetricExporter as GrpcExporter,
            )
        except ImportError:
            log.warning(
                "OTLP over gRPC needs opentelemetry-exporter-otlp-proto-grpc; "
                "sending metrics over HTTP/protobuf instead"
            )
        else:
            grpc: MetricExporter = GrpcExporter()
            return grpc
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()

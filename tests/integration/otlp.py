"""An OTLP/HTTP receiver for tests: accepts POST /v1/traces and /v1/metrics on loopback and
keeps the spans and the metrics' points (decoded with opentelemetry-proto, as a collector
would)."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric

KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived: ids in hex, its process's service.name."""

    service: str
    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    attributes: dict[str, Any]
    error: bool


@dataclass(frozen=True)
class ReceivedPoint:
    """One data point of a metric as it arrived, with its process's service.name."""

    service: str
    name: str
    kind: str  # sum, gauge or histogram (OTLP's data field)
    attributes: dict[str, Any]
    value: float  # a histogram's: its count
    monotonic: bool = False  # a sum's
    cumulative: bool = False  # a sum's or a histogram's temporality
    bucket_counts: tuple[int, ...] = ()  # a histogram's
    explicit_bounds: tuple[float, ...] = ()
    sum: float = 0.0


Received = TypeVar("Received", ReceivedSpan, ReceivedPoint)


@dataclass
class Receiver:
    """The spans and metric points received so far, and a way to wait for some."""

    url: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    points: list[ReceivedPoint] = field(default_factory=list)
    requests: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        ReceivedSpan(
                            service=str(resource.get("service.name", "")),
                            name=span.name,
                            kind=KINDS.get(span.kind, str(span.kind)),
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            attributes=_attributes(span.attributes),
                            error=span.status.code == 2,  # STATUS_CODE_ERROR
                        )
                    )
        with self.changed:
            self.spans.extend(found)
            self.requests += 1
            self.changed.notify_all()

    def add_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_metrics in request.resource_metrics:
            service = str(_attributes(resource_metrics.resource.attributes).get("service.name"))
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    found.extend(_points(service, metric))
        with self.changed:
            self.points.extend(found)
            self.requests += 1
            self.changed.notify_all()

    def wait_for_points(
        self, predicate: Callable[[list[ReceivedPoint]], bool], timeout_s: float, what: str
    ) -> list[ReceivedPoint]:
        """The metric points once `predicate` holds for them; fails after `timeout_s`."""
        return self._wait(self.points, predicate, timeout_s, what)

    def wait_for(
        self, predicate: Callable[[list[ReceivedSpan]], bool], timeout_s: float, what: str
    ) -> list[ReceivedSpan]:
        """The spans once `predicate` holds for them; fails after `timeout_s`."""
        return self._wait(self.spans, predicate, timeout_s, what)

    def _wait(
        self,
        received: list[Received],
        predicate: Callable[[list[Received]], bool],
        timeout_s: float,
        what: str,
    ) -> list[Received]:
        """`received` (spans or points, which requests extend) once `predicate` holds."""
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while not predicate(received):
                left = deadline - time.monotonic()
                if left <= 0:
                    names = sorted({(r.service, r.name) for r in received})
                    raise AssertionError(f"timed out waiting for {what}; received {names}")
                self.changed.wait(left)
            return list(received)


CUMULATIVE = 2  # AGGREGATION_TEMPORALITY_CUMULATIVE


def _points(service: str, metric: Metric) -> list[ReceivedPoint]:
    """A metric's data points (sums, gauges, explicit-bucket histograms)."""
    kind = metric.WhichOneof("data")
    if kind == "histogram":
        cumulative = metric.histogram.aggregation_temporality == CUMULATIVE
        return [
            ReceivedPoint(
                service,
                metric.name,
                kind,
                _attributes(point.attributes),
                point.count,
                cumulative=cumulative,
                bucket_counts=tuple(point.bucket_counts),
                explicit_bounds=tuple(point.explicit_bounds),
                sum=point.sum,
            )
            for point in metric.histogram.data_points
        ]
    if kind not in ("sum", "gauge"):
        return []
    data = getattr(metric, kind)
    monotonic = kind == "sum" and data.is_monotonic
    cumulative = kind == "sum" and data.aggregation_temporality == CUMULATIVE
    return [
        ReceivedPoint(
            service,
            metric.name,
            kind,
            _attributes(point.attributes),
            getattr(point, point.WhichOneof("value")),
            monotonic=monotonic,
            cumulative=cumulative,
        )
        for point in data.data_points
    ]


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    return None if which is None else getattr(value, which)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """A receiver listening on a free loopback port until the block ends."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                receiver.add(body)
                answer = ExportTraceServiceResponse().SerializeToString()
            elif self.path == "/v1/metrics":
                receiver.add_metrics(body)
                answer = ExportMetricsServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

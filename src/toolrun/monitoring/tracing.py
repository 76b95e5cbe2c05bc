"""Traces of calls (OpenTelemetry), one trace per call across the API, the queue and the
worker; off, and free, unless the OTEL_* variables ask for them.

Off, `span` hands back one shared empty context manager and `carrier` an empty dict: the
SDK's tracing and the exporter are never imported. On (`setup`, once per process:
the API, each worker pool process, the scheduler), spans go through the SDK's batch
processor to the OTLP endpoint (HTTP/protobuf, or gRPC where its exporter is installed)
with `service.name` naming the process. The trace context crosses the queue in the
envelope (`Envelope.trace`, W3C `traceparent`), so a worker's span is a child of the
span that queued the call. Spans carry names, ids and decisions; a call's arguments and
output only in the tool spans of the tools an operator names (`Settings.trace_content`,
secrets redacted: `calls.traced`).
"""

# ruff: noqa: PLC0415 - OpenTelemetry is imported only once traces are on (see above)
from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolrun import __version__
from toolrun.config import Settings
from toolrun.sandbox.watch import watch_process_starts

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

__all__ = ["annotate", "carrier", "enabled", "setup", "shutdown", "span"]
log = logging.getLogger(__name__)
Kind = Literal["internal", "server", "client", "producer", "consumer"]
Attributes = Mapping[str, str | bool | int | float | Sequence[str] | None]
_OFF: AbstractContextManager[None] = nullcontext()


@dataclass(frozen=True)
class _Tracing:
    tracer: Tracer
    provider: TracerProvider
    pid: int


_on: _Tracing | None = None


def setup(settings: Settings, service: str) -> bool:
    """Export this process's spans as `service` (toolrun-api, toolrun-worker,
    toolrun-scheduler) when the OTEL_* variables ask for traces; True when they do and the
    SDK is installed (`toolrun[otel]`). Call it in the process that makes the spans (a
    worker's pool process, and its parent for the history drainer): a forked process
    makes its own provider rather than share its parent's exporter and its connections."""
    global _on  # noqa: PLW0603 - one tracer provider per process, as OpenTelemetry has it
    if _on is not None and _on.pid == os.getpid():
        return True
    forked = _on is not None  # from a process with traces on: the global provider is set
    exporters = settings.trace_exporters
    if not exporters:
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning(
            "OTEL_* variables ask for traces, but the OpenTelemetry SDK is not installed "
            "(pip install 'toolrun[otel]'): no traces"
        )
        return False
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "service.version": __version__})
    )
    for name in exporters:
        exporter = _exporter(name, settings)
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
    if not forked:  # OpenTelemetry sets it once per interpreter, and warns after
        trace.set_tracer_provider(provider)
    _on = _Tracing(provider.get_tracer("toolrun", __version__), provider, os.getpid())
    watch_process_starts(_process_start)
    log.info("traces on: %s as %s", ", ".join(exporters), service)
    return True


def _exporter(name: str, settings: Settings) -> SpanExporter | None:
    """The SDK's exporter called `name`; it reads its endpoint, headers and timeout from
    the OTEL_EXPORTER_OTLP_* variables itself."""
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if name != "otlp":
        log.warning("OTEL_TRACES_EXPORTER %r is not one toolrun knows (otlp, console)", name)
        return None
    if settings.otlp_protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found, unused-ignore]
                OTLPSpanExporter as GrpcExporter,
            )
        except ImportError:
            log.warning(
                "OTLP over gRPC needs opentelemetry-exporter-otlp-proto-grpc; "
                "sending over HTTP/protobuf instead"
            )
        else:
            grpc: SpanExporter = GrpcExporter()
            return grpc
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _process_start(program: str) -> AbstractContextManager[Span | None]:
    """The span of a tool's process start in the sandbox (fork or warm launcher, jail)."""
    return span(f"start {program}", attributes={"process.executable.name": program})


def enabled() -> bool:
    """True once `setup` turned traces on in this process."""
    return _on is not None


def shutdown() -> None:
    """Send the spans still waiting in the batch, then stop (a process on its way out)."""
    global _on  # noqa: PLW0603
    if _on is not None:
        watch_process_starts(None)
        _on.provider.shutdown()
        _on = None


def span(
    name: str,
    *,
    kind: Kind = "internal",
    attributes: Attributes | None = None,
    parent: Mapping[str, str] | None = None,
) -> AbstractContextManager[Span | None]:
    """A span around the block, current inside it, a child of the current span or of the
    trace context `parent` carries (an envelope's `trace`); yields None when tracing is off."""
    if _on is None:
        return _OFF
    return _started(_on.tracer, name, kind, attributes, parent)


@contextmanager
def _started(
    tracer: Tracer,
    name: str,
    kind: Kind,
    attributes: Attributes | None,
    parent: Mapping[str, str] | None,
) -> Iterator[Span]:
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    # W3C trace context only: not the global propagators' baggage, which an agent's
    # request could fill and every envelope would carry.
    context = None if parent is None else TraceContextTextMapPropagator().extract(parent)
    with tracer.start_as_current_span(
        name, context=context, kind=SpanKind[kind.upper()], attributes=_given(attributes)
    ) as started:
        yield started


def carrier() -> dict[str, str]:
    """The current trace context as W3C headers (`traceparent`), to carry across the
    queue; empty when tracing is off."""
    if _on is None:
        return {}
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    found: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(found)  # traceparent, tracestate: no baggage
    return found


def annotate(span: Span | None, attributes: Attributes, *, error: str | None = None) -> None:
    """Add `attributes` (those not None) to `span`; `error`: the span failed, and why
    (its `error.type`, as the OpenTelemetry conventions name it)."""
    if span is None:
        return
    span.set_attributes(_given(attributes))
    if error is not None:
        from opentelemetry.trace import StatusCode

        span.set_attribute("error.type", error)
        span.set_status(StatusCode.ERROR, error)


def _given(attributes: Attributes | None) -> dict[str, Any]:
    return {} if attributes is None else {k: v for k, v in attributes.items() if v is not None}

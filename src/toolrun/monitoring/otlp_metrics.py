"""The platform's metrics also sent by OTLP (OpenTelemetry) from the API, when the OTEL_*
variables ask for them; Prometheus's /metrics stays, and stays the default.

Off, `start` returns None and nothing of OpenTelemetry's SDK is imported. On (`start` in
the API's lifespan), a task reads what /metrics serves (`reading.read_platform`) once per
export interval, and a meter provider of its own (`service.name` toolrun-api) exports that
reading by the SDK's periodic reader: the same families, names and labels (`_otel_metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import redis.asyncio as aioredis

from toolrun.config import Settings
from toolrun.embedded.supervisor import STATUS_FILE
from toolrun.monitoring.collector import PlatformCollector
from toolrun.monitoring.reading import read_platform
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.inbox import ApprovalInbox

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import MeterProvider

    from toolrun.monitoring._otel_metrics import Latest

__all__ = ["MetricsExport", "start"]
log = logging.getLogger(__name__)
SERVICE = "toolrun-api"
SHUTDOWN_MS = 10_000  # the last export, on the API's way out


@dataclass(frozen=True)
class MetricsExport:
    """The running export: the reading task and the meter provider."""

    reading: asyncio.Task[None]
    provider: MeterProvider

    async def stop(self) -> None:
        """Stop reading, send what was read last, and stop the provider's thread."""
        self.reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reading
        await asyncio.to_thread(self.provider.shutdown, timeout_millis=SHUTDOWN_MS)


def start(
    settings: Settings,
    *,
    redis: aioredis.Redis,
    inbox: ApprovalInbox,
    agents: AgentStore,
) -> MetricsExport | None:
    """Export the platform's metrics by OTLP when the OTEL_* variables ask for it and the
    SDK is installed (`toolrun[otel]`), from now until `stop`; else None."""
    exporters = settings.metric_exporters
    if not exporters:
        return None
    try:
        from toolrun.monitoring import _otel_metrics  # noqa: PLC0415 - the SDK, only when on
    except ImportError:
        log.warning(
            "OTEL_* variables ask for metrics, but the OpenTelemetry SDK is not installed "
            "(pip install 'toolrun[otel]'): /metrics only"
        )
        return None
    latest = _otel_metrics.Latest()
    interval_s = settings.otel_metric_export_interval_ms / 1000
    read = partial(
        read_platform,
        redis,
        inbox=inbox,
        agents=agents,
        queue_bound=settings.queue_bound,
        status_file=settings.platform_home / STATUS_FILE,
    )
    provider = _otel_metrics.meter_provider(
        exporters,
        latest,
        protocol=settings.otlp_metrics_protocol,
        interval_ms=settings.otel_metric_export_interval_ms,
        service=SERVICE,
    )
    reading = asyncio.create_task(keep_reading(latest, read, interval_s))
    log.info("metrics by OTLP on: %s every %g s as %s", ", ".join(exporters), interval_s, SERVICE)
    return MetricsExport(reading, provider)


async def keep_reading(
    latest: Latest, read: Callable[[], Awaitable[PlatformCollector]], interval_s: float
) -> None:
    """Read the platform's metrics into `latest` every `interval_s`; while Redis or the
    database is away, nothing (as /metrics answers 503 then)."""
    failing = False
    while True:
        try:
            latest.update((await read()).collect())
            failing = False
        except Exception as exc:  # Redis or the database away: try again next round
            latest.update(())
            if not failing:
                log.warning("metrics for OTLP not read (%r); trying again", exc)
            failing = True
        await asyncio.sleep(interval_s)

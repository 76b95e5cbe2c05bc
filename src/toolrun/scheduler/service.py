"""The scheduler process: its parts built from Settings, run until SIGTERM or SIGINT."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading

import redis

from toolrun.calls.endings import history_rows
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import platform_endings, platform_lifecycle
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.history import HistoryStore
from toolrun.monitoring import tracing
from toolrun.plugins.registry import PluginRegistry, plugin_cache
from toolrun.scheduler.dispatch import NodeDispatcher
from toolrun.scheduler.lease import Lease
from toolrun.scheduler.loop import RECONCILE_S, Scheduler
from toolrun.scheduler.store import RunStore
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.app import create_celery_app, longest_time_limit

log = logging.getLogger(__name__)


def build_scheduler(settings: Settings, registry: ToolRegistry) -> Scheduler:
    """A scheduler for the broker, database and tools in `settings`."""
    engine = open_database(settings.database)
    client = redis.Redis.from_url(str(settings.redis_url), socket_timeout=RECONCILE_S + 10)
    celery = create_celery_app(
        settings, longest_time_limit_s=longest_time_limit(registry, settings)
    )
    tools = PluginRegistry(registry, settings.database, plugin_cache(settings))
    tools.refresh(within_s=0)  # and from then on in the background
    lifecycle = platform_lifecycle(
        settings,
        tools,
        client=client,
        database=engine,
        celery=celery,
        ended=platform_endings(
            settings,
            CallStore(client, ttl_s=settings.call_ttl_s),
            history_rows(HistoryStore(engine).write),
        ),
    )
    return Scheduler(RunStore(engine), NodeDispatcher(lifecycle), client)


def serve(settings: Settings, registry: ToolRegistry) -> None:
    """Run the scheduler until SIGTERM or SIGINT: leading while it holds the lease (see
    `scheduler.lease`), standing by while another scheduler does. A broker or database
    hiccup is logged and the loop starts again (it resumes from the database)."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    tracing.setup(settings, "toolrun-scheduler")  # when OTEL_* asks for traces
    scheduler = build_scheduler(settings, registry)
    name = f"{socket.gethostname()}/{os.getpid()}"
    lease = Lease(scheduler.client, name, ttl_s=settings.scheduler_lease_s)
    log.info("scheduler ready (%s)", name)
    try:
        while not stop.is_set():
            try:
                if not lease.acquire():
                    stop.wait(lease.ttl_s / 3)  # standing by
                    continue
                log.info("scheduler %s leads", name)
                scheduler.serve(stop, leading=lease.held)
                if not stop.is_set():
                    log.warning("scheduler %s lost its lease; standing by", name)
            except Exception as exc:  # a hiccup: back off, resume from the database
                log.warning("scheduler loop failed (%r); resuming", exc)
                stop.wait(1.0)
            scheduler.runs.clear()
    finally:
        with contextlib.suppress(redis.RedisError):
            lease.release()  # a standby takes over at once
        tracing.shutdown()  # the spans still in the batch

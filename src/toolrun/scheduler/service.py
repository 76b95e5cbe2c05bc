"""The scheduler process: its parts built from Settings, run until SIGTERM or SIGINT."""

from __future__ import annotations

import logging
import signal
import threading

import redis

from toolrun.calls.endings import history_rows, written_by
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import platform_endings, platform_lifecycle
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.history import HistoryStore
from toolrun.plugins.registry import PluginRegistry, plugin_cache
from toolrun.scheduler.dispatch import NodeDispatcher
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
            history_rows(written_by(HistoryStore(engine).write)),
        ),
    )
    return Scheduler(RunStore(engine), NodeDispatcher(lifecycle), client)


def serve(settings: Settings, registry: ToolRegistry) -> None:
    """Run the scheduler until SIGTERM or SIGINT; a broker or database hiccup is logged
    and the loop starts again (it resumes from the database)."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    scheduler = build_scheduler(settings, registry)
    log.info("scheduler ready")
    while not stop.is_set():
        try:
            scheduler.serve(stop)
        except Exception as exc:  # a hiccup: back off, resume from the database
            log.warning("scheduler loop failed (%r); resuming", exc)
            scheduler.runs.clear()
            stop.wait(1.0)

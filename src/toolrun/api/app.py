"""The FastAPI app factory."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import redis
import redis.asyncio as aioredis
from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from toolrun import __version__
from toolrun.api import (
    agents,
    approvals,
    calls,
    dags,
    docs_pages,
    health,
    history,
    metrics,
    plugins,
    security,
    selection,
    stats,
    subagents,
    tools,
    ui,
)
from toolrun.api.errors import install_error_handlers
from toolrun.api.limits import BodySizeLimit
from toolrun.api.state import ApiState
from toolrun.calls.endings import history_rows
from toolrun.calls.store import AsyncCallStore, CallStore
from toolrun.calls.wiring import fair_queues, platform_endings, platform_lifecycle
from toolrun.config import Settings
from toolrun.database import create_database_engine, migrate
from toolrun.history import HistoryStore
from toolrun.monitoring import configure_logging, otlp_metrics, tracing
from toolrun.permissions.agents import AgentStore, TokenCache
from toolrun.permissions.inbox import ApprovalInbox
from toolrun.permissions.rules import RuleBook
from toolrun.permissions.security_log import SecurityLog
from toolrun.permissions.warnings import AgentWarnings
from toolrun.plugins.registry import PluginRegistry, plugin_cache
from toolrun.scheduler.store import RunStore
from toolrun.selection.model_steps import ModelSteps
from toolrun.selection.preferences import Preferences
from toolrun.subagents.catalog import SubAgentStore
from toolrun.tools.loading import registry_with
from toolrun.workers.app import create_celery_app, longest_time_limit

CONNECT_TIMEOUT_S = 2.0
MAX_REDIS_CONNECTIONS = 512
ADMISSION_THREADS = 4
# The lifecycle's Redis connections: the admission threads and anyio's pool (40 threads),
# which runs approvals and the expiry sweep. Each of these threads also keeps a connection
# of its own for the call scripts (`calls.lua`), outside this bound: 44 more at most.
LIFECYCLE_REDIS_CONNECTIONS = 64
EXPIRY_SWEEP_S = 1.0
PRUNE_EVERY_S = 3600.0
log = logging.getLogger(__name__)


def create_app_from_environment() -> FastAPI:
    """The API for the TOOLRUN_* environment (uvicorn's factory, one call per process),
    logging structured lines, and tracing when the OTEL_* variables ask for it."""
    settings = Settings()
    configure_logging(settings)
    tracing.setup(settings, "toolrun-api")
    return create_app(settings)


def create_app(settings: Settings) -> FastAPI:
    """The API for the broker and workspace in `settings`."""
    registry = registry_with(settings.tool_modules, settings.tool_packs)
    longest = longest_time_limit(registry, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Waiting callers block in BLMOVE for up to max_wait_s: reads may take that long.
        # The pool is bounded so that waiters cannot exhaust Redis's clients; past it a
        # request waits CONNECT_TIMEOUT_S for a connection, then gets a 503.
        pool = aioredis.BlockingConnectionPool.from_url(
            str(settings.redis_url),
            max_connections=MAX_REDIS_CONNECTIONS,
            timeout=CONNECT_TIMEOUT_S,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=settings.max_wait_s + CONNECT_TIMEOUT_S,
        )
        client = aioredis.Redis(connection_pool=pool)
        # The lifecycle's own client, used from the admission threads and anyio's pool.
        sync_client = redis.Redis.from_url(
            str(settings.redis_url),
            max_connections=LIFECYCLE_REDIS_CONNECTIONS,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=CONNECT_TIMEOUT_S * 5,
        )
        celery = create_celery_app(settings, longest_time_limit_s=longest)
        database = create_database_engine(settings.database)
        agent_store = AgentStore(database)
        tools = PluginRegistry(registry, settings.database, plugin_cache(settings))
        history_store = HistoryStore(database)
        lifecycle = platform_lifecycle(
            settings,
            tools,
            client=sync_client,
            database=database,
            celery=celery,
            ended=platform_endings(
                settings,
                CallStore(sync_client, ttl_s=settings.call_ttl_s),
                history_rows(history_store.write),
                patient=False,  # a request answers 503 at once rather than wait for Redis
            ),
        )
        app.state.toolrun = state = ApiState(
            settings=settings,
            registry=tools,
            celery=celery,
            redis=client,
            store=AsyncCallStore(client),
            lifecycle=lifecycle,
            queues=fair_queues(settings, sync_client),
            context=lifecycle.context,
            admission=ThreadPoolExecutor(ADMISSION_THREADS, thread_name_prefix="admit"),
            database=database,
            agents=agent_store,
            tokens=TokenCache(agent_store),
            inbox=ApprovalInbox(database),
            rules=RuleBook(database),
            security=SecurityLog(database),
            history=history_store,
            runs=RunStore(database),
            warnings=AgentWarnings(database),
            subagents=SubAgentStore(database),
            preferences=Preferences(
                database,
                failures=settings.blacklist_failures,
                cooldown_s=settings.blacklist_cooldown_s,
            ),
            selection_model=ModelSteps.configured(settings),
        )
        tables = _tables_created(database)
        try:  # the plugins now, and from then on in the background (it starts even here)
            await run_in_threadpool(tools.refresh, within_s=0)
        except SQLAlchemyError as exc:
            log.warning("plugins not loaded at start (%s); retrying", type(exc).__name__)
        sweeper = asyncio.create_task(_sweep_expired(state, tables=tables))
        exported = otlp_metrics.start(settings, redis=client, inbox=state.inbox, agents=agent_store)
        try:
            yield
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            if exported is not None:
                await exported.stop()
            app.state.toolrun.admission.shutdown(wait=True)
            app.state.toolrun.database.dispose()
            if state.selection_model is not None:
                state.selection_model.chat.close()
            await client.aclose(close_connection_pool=True)  # a pool passed in stays open otherwise
            sync_client.close()
            celery.close()

    app = FastAPI(
        title="toolrun",
        version=__version__,
        description="Run AI-agent tool calls on isolated workers.",
        lifespan=lifespan,
        docs_url=None,  # docs_pages serves them with their assets, no CDN
        redoc_url=None,
        # A request's server span (its parent: the `traceparent` an agent sent) is FastAPI's
        # own, made once a tracer provider is set (`monitoring.tracing`); toolrun's spans
        # say what happens inside, so FastAPI's spans of dependencies are left out.
        telemetry={"operation_spans": False},
    )
    install_error_handlers(app)
    routers = (
        tools,
        plugins,
        calls,
        dags,
        approvals,
        history,
        stats,
        agents,
        subagents,
        selection,
        security,
        health,
        metrics,
        ui,
        docs_pages,
    )
    for module in routers:
        app.include_router(module.router)
    plugin_upload = {("POST", "/v1/tools"): settings.max_plugin_bytes}
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes, larger=plugin_upload)
    return app


def _tables_created(database: Engine) -> bool:
    """Migrate the schema now if the database answers (else the sweep tries again)."""
    try:
        migrate(database)
    except SQLAlchemyError as exc:
        log.warning("database unavailable at start (%s); will retry", type(exc).__name__)
        return False
    return True


async def _sweep_expired(state: ApiState, *, tables: bool) -> None:
    """Migrate the schema if that failed at start (/healthz reports the database), deny
    calls that waited too long for approval every EXPIRY_SWEEP_S, and prune history rows
    past the retention period every PRUNE_EVERY_S."""
    pruned_at = 0.0
    while True:
        try:
            if not tables:
                await run_in_threadpool(migrate, state.database)
                tables = True
            await approvals.expire_overdue(state)
            days = state.settings.history_retention_days
            if days is not None and time.monotonic() - pruned_at > PRUNE_EVERY_S:
                pruned_at = time.monotonic()
                gone = await run_in_threadpool(state.history.prune, time.time() - days * 86400)
                if gone:
                    log.info("pruned %d history rows older than %g days", gone, days)
        except Exception as exc:  # a database or broker hiccup: try again next round
            log.warning("background sweep failed: %r", exc)
        await asyncio.sleep(EXPIRY_SWEEP_S)

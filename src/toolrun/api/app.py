"""The FastAPI app factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from fastapi import FastAPI

from toolrun import __version__
from toolrun.api import calls, health, tools
from toolrun.api.database import create_database_engine
from toolrun.api.errors import install_error_handlers
from toolrun.api.limits import BodySizeLimit
from toolrun.api.state import ApiState
from toolrun.calls.store import AsyncCallStore
from toolrun.config import Settings
from toolrun.tools.base import ToolContext
from toolrun.tools.loading import registry_with
from toolrun.workers.app import create_celery_app, longest_time_limit

CONNECT_TIMEOUT_S = 2.0
MAX_REDIS_CONNECTIONS = 512
PUBLISH_THREADS = 4


def create_app_from_environment() -> FastAPI:
    """The API for the TOOLRUN_* environment (uvicorn's factory, one call per process)."""
    return create_app(Settings())


def create_app(settings: Settings) -> FastAPI:
    """The API for the broker and workspace in `settings`."""
    registry = registry_with(settings.tool_modules)
    longest = longest_time_limit(registry, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Waiting callers block in BLPOP for up to max_wait_s: reads may take that long.
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
        celery = create_celery_app(settings, longest_time_limit_s=longest)
        app.state.toolrun = ApiState(
            settings=settings,
            registry=registry,
            celery=celery,
            redis=client,
            store=AsyncCallStore(client, ttl_s=settings.call_ttl_s),
            context=ToolContext.create(settings),
            publisher=ThreadPoolExecutor(PUBLISH_THREADS, thread_name_prefix="publish"),
            database=create_database_engine(settings.database),
        )
        try:
            yield
        finally:
            app.state.toolrun.publisher.shutdown(wait=True)
            app.state.toolrun.database.dispose()
            await client.aclose()
            celery.close()

    app = FastAPI(
        title="toolrun",
        version=__version__,
        description="Run AI-agent tool calls on isolated workers.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.include_router(tools.router)
    app.include_router(calls.router)
    app.include_router(health.router)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    return app

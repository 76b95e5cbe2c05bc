"""A real Redis for the counters (database 12, flushed around each test), and logging
configured into a buffer.

Locally, tests skip when Redis is missing; in CI (CI=true) a missing Redis fails them.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
import structlog

from toolrun.config import Settings
from toolrun.monitoring import Snapshot, configure_logging, read_snapshot

METRICS_REDIS_URL = os.environ.get("TOOLRUN_TEST_METRICS_REDIS_URL", "redis://127.0.0.1:6379/12")


@pytest.fixture
def redis_url() -> Iterator[str]:
    client = redis.Redis.from_url(METRICS_REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        if os.environ.get("CI"):
            pytest.fail(f"CI needs Redis at {METRICS_REDIS_URL}: {exc}")
        pytest.skip(f"no Redis at {METRICS_REDIS_URL}")
    client.flushdb()
    try:
        yield METRICS_REDIS_URL
    finally:
        client.flushdb()
        client.close()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


Configure = Callable[..., io.StringIO]


@pytest.fixture
def logs() -> Iterator[Configure]:
    """`logs(log_format=...)` configures logging into a buffer; everything is put back after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    servers = [logging.getLogger(name) for name in ("uvicorn", "uvicorn.error", "uvicorn.access")]
    server_state = [(logger.handlers[:], logger.propagate) for logger in servers]

    def configure(**settings: Any) -> io.StringIO:
        buffer = io.StringIO()
        configure_logging(Settings(**settings), stream=buffer)
        return buffer

    try:
        yield configure
    finally:
        root.handlers, root.level = handlers, level
        for logger, (server_handlers, propagate) in zip(servers, server_state, strict=True):
            logger.handlers, logger.propagate = server_handlers, propagate
        structlog.reset_defaults()
        structlog.contextvars.clear_contextvars()


def lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    """The JSON objects logged into `buffer`, one a line."""
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def snapshot(redis_url: str) -> Snapshot:
    """The counters and queue depths, read as /metrics reads them."""

    async def read() -> Snapshot:
        client = aioredis.Redis.from_url(redis_url)
        try:
            return await read_snapshot(client)
        finally:
            await client.aclose()

    return asyncio.run(read())

"""Logging configured into a buffer, and the counters read back from Redis (the
`redis_url` fixture: tests/conftest.py)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis
import structlog

from toolrun.config import Settings
from toolrun.monitoring import Snapshot, configure_logging, read_snapshot

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


@pytest.fixture
def no_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OpenTelemetry variable set: tests set the ones they need."""
    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)

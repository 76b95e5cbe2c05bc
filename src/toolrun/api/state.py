"""What the API's routes share: settings, registry, broker, call store."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis
from celery import Celery
from fastapi import Request

from toolrun.calls.store import AsyncCallStore
from toolrun.config import Settings
from toolrun.tools.base import ToolContext
from toolrun.tools.registry import ToolRegistry


@dataclass
class ApiState:
    """Created at start-up, closed at shutdown."""

    settings: Settings
    registry: ToolRegistry
    celery: Celery
    redis: aioredis.Redis
    store: AsyncCallStore
    context: ToolContext  # for confirmation checks, which look at the workspace


def get_state(request: Request) -> ApiState:
    state: ApiState = request.app.state.toolrun
    return state

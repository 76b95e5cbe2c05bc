"""GET /healthz: is the broker reachable, how are tool processes isolated."""

from __future__ import annotations

import asyncio
from typing import Annotated

import redis
from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from toolrun.api.schemas import Health
from toolrun.api.state import ApiState, get_state
from toolrun.sandbox.tracking import isolation_kind

router = APIRouter(tags=["health"])
PING_TIMEOUT_S = 2.0


@router.get("/healthz", response_model=Health, responses={503: {"model": Health}})
async def healthz(state: Annotated[ApiState, Depends(get_state)]) -> JSONResponse:
    """200 when the broker answers, 503 when it does not."""
    try:
        await asyncio.wait_for(state.redis.ping(), PING_TIMEOUT_S)
        broker = "ok"
    except (TimeoutError, redis.RedisError, OSError) as exc:
        broker = f"unavailable: {type(exc).__name__}"
    health = Health(
        status="ok" if broker == "ok" else "unhealthy",
        redis=broker,
        database="not used yet: call records live in Redis",
        sandbox=isolation_kind(use_cgroups=state.settings.use_cgroups),
    )
    return JSONResponse(health.model_dump(), status_code=200 if broker == "ok" else 503)

"""GET /healthz: do the broker and the database answer, how are tool processes isolated."""

from __future__ import annotations

import asyncio
from typing import Annotated

import redis
from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from toolrun.api.schemas import Health
from toolrun.api.state import ApiState, get_state
from toolrun.database import check_database
from toolrun.sandbox.tracking import isolation_kind

router = APIRouter(tags=["health"])
PING_TIMEOUT_S = 2.0


@router.get("/healthz", response_model=Health, responses={503: {"model": Health}})
async def healthz(state: Annotated[ApiState, Depends(get_state)]) -> JSONResponse:
    """200 when the broker and the database answer, 503 when either does not."""
    try:
        await asyncio.wait_for(state.redis.ping(), PING_TIMEOUT_S)
        broker = "ok"
    except (TimeoutError, redis.RedisError, OSError) as exc:
        broker = f"unavailable: {type(exc).__name__}"
    try:
        await asyncio.wait_for(run_in_threadpool(check_database, state.database), PING_TIMEOUT_S)
        database = "ok"
    except (TimeoutError, SQLAlchemyError, OSError) as exc:
        database = f"unavailable: {type(exc).__name__}"
    healthy = broker == database == "ok"
    health = Health(
        status="ok" if healthy else "unhealthy",
        redis=broker,
        database=database,
        sandbox=isolation_kind(use_cgroups=state.settings.use_cgroups),
    )
    return JSONResponse(health.model_dump(), status_code=200 if healthy else 503)

"""GET /healthz: do the broker and the database answer, how are tool processes isolated.

`network` is "isolated", or names every worker whose tools have the host's network and why
("tools.execute@host degraded: ..."): degraded is reported, never hidden, but not a 503.
"""

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
from toolrun.calls import keys
from toolrun.database import check_database
from toolrun.sandbox.tracking import isolation_kind
from toolrun.workers.isolation import ISOLATED

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
    network = await _network(state) if broker == "ok" else "unknown"
    health = Health(
        status="ok" if healthy else "unhealthy",
        redis=broker,
        database=database,
        sandbox=isolation_kind(use_cgroups=state.settings.use_cgroups),
        network=network,
    )
    return JSONResponse(health.model_dump(), status_code=200 if healthy else 503)


async def _network(state: ApiState) -> str:
    """isolated when every worker jails its tools' network; else which are degraded, why."""
    reports = {}
    async for key in state.redis.scan_iter(f"{keys.NETWORK}:*"):
        value = await state.redis.get(key)
        if value is not None:
            reports[_text(key).removeprefix(f"{keys.NETWORK}:")] = _text(value)
    if not reports:
        return "unknown: no worker has reported"
    degraded = sorted(f"{worker} {why}" for worker, why in reports.items() if why != ISOLATED)
    return "; ".join(degraded) if degraded else ISOLATED


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

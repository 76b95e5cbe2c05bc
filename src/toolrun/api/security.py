"""GET /v1/security-events: refused calls, connections and requests, for operators."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.concurrency import run_in_threadpool

from toolrun.api.auth import Operator
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.security_log import EventKind, SecurityEvent

router = APIRouter(tags=["security"])


@router.get("/v1/security-events", response_model=list[SecurityEvent])
async def security_events(
    state: Annotated[ApiState, Depends(get_state)],
    operator: Operator,
    kind: EventKind | None = None,
    since: Annotated[float | None, Query(description="Unix time; default: any.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[SecurityEvent]:
    """Newest first."""
    return await run_in_threadpool(lambda: state.security.list(kind=kind, since=since, limit=limit))

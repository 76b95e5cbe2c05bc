"""GET /v1/stats: per-tool statistics over a time window, and what makes slow tools slow."""

from __future__ import annotations

import time
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from toolrun.api.auth import Operator
from toolrun.api.state import ApiState, get_state
from toolrun.history.analysis import SlowTool, slow_tools
from toolrun.history.stats import HistoryStats, ToolStats

router = APIRouter(tags=["history"])
DEFAULT_WINDOW_S = 24 * 3600


class StatsResponse(BaseModel):
    """Statistics of the calls that ended in [since, until)."""

    since: float
    until: float
    by: Literal["tool", "version"]
    tools: list[ToolStats]  # most calls first
    slow: list[SlowTool]  # tools whose p95 is over the slow-call threshold


@router.get("/v1/stats", responses={422: {"description": "since is not before until"}})
async def stats(
    state: Annotated[ApiState, Depends(get_state)],
    _operator: Operator,
    since: Annotated[
        float | None,
        Query(
            allow_inf_nan=False, description="Ended at or after (Unix time); default: a day ago."
        ),
    ] = None,
    until: Annotated[
        float | None, Query(allow_inf_nan=False, description="Ended before (Unix time).")
    ] = None,
    by: Literal["tool", "version"] = "tool",
) -> StatsResponse:
    """Calls, failure rate, timeouts, mean / p50 / p95 / max execution time, mean CPU and
    peak memory per tool (or per tool version); operators only."""
    end = time.time() if until is None else until
    start = end - DEFAULT_WINDOW_S if since is None else since
    if start >= end:
        raise HTTPException(422, f"since ({start}) must be before until ({end})")

    def compute() -> StatsResponse:
        summary = HistoryStats(state.database)
        tools = summary.tools(start, end, by_version=by == "version")
        per_tool = tools if by == "tool" else summary.tools(start, end)
        threshold = state.settings.slow_call_ms
        slow = slow_tools(state.database, per_tool, start, end, threshold)
        return StatsResponse(since=start, until=end, by=by, tools=tools, slow=slow)

    return await run_in_threadpool(compute)

"""GET /v1/history: every call that ended, newest first, filtered, a page at a time."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from toolrun.api.auth import Agent
from toolrun.api.state import ApiState, get_state
from toolrun.history import CallRecord, HistoryFilter
from toolrun.history.store import DEFAULT_LIMIT, MAX_LIMIT, InvalidCursor
from toolrun.permissions.agents import Role
from toolrun.tools.model import ToolStatus

router = APIRouter(tags=["history"])


class HistoryResponse(BaseModel):
    """One page; `next_cursor` fetches the next (older) one, null when there is none."""

    rows: list[CallRecord]
    next_cursor: str | None


@router.get("/v1/history", responses={404: {"description": "Unknown agent"}})
async def history(
    state: Annotated[ApiState, Depends(get_state)],
    caller: Agent,
    tool: Annotated[str | None, Query(max_length=64)] = None,
    version: Annotated[str | None, Query(max_length=64)] = None,
    agent: Annotated[str | None, Query(max_length=64, description="Agent name.")] = None,
    status: ToolStatus | None = None,
    since: Annotated[float | None, Query(description="Queued at or after (Unix time).")] = None,
    until: Annotated[float | None, Query(description="Queued before (Unix time).")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> HistoryResponse:
    """Calls newest first. Agents see their own calls only; operators see every agent's."""
    agent_id: str | None = caller.id
    if caller.role.includes(Role.OPERATOR):
        agent_id = None
        if agent is not None:
            profile = await run_in_threadpool(state.agents.get, agent)
            if profile is None:
                raise HTTPException(404, f"no agent named {agent!r}")
            agent_id = profile.id
    where = HistoryFilter(
        tool=tool,
        version=version,
        agent_id=agent_id,
        status=None if status is None else status.value,
        since=since,
        until=until,
    )
    try:
        page = await run_in_threadpool(
            lambda: state.history.query(where, limit=limit, cursor=cursor)
        )
    except InvalidCursor as exc:
        raise HTTPException(422, str(exc)) from exc
    return HistoryResponse(rows=page.rows, next_cursor=page.next_cursor)

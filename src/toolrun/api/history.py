"""GET /v1/history and /v1/history/export: the calls that ended, newest first, filtered."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from toolrun.api.auth import Agent
from toolrun.api.state import ApiState, get_state
from toolrun.history import HistoryFilter
from toolrun.history.export import MEDIA_TYPES, export
from toolrun.history.formats import ExportFormat
from toolrun.history.records import NamedCall
from toolrun.history.store import DEFAULT_LIMIT, MAX_LIMIT, InvalidCursor
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.roles import Role
from toolrun.tools.model import ToolStatus

router = APIRouter(tags=["history"])
UNKNOWN_AGENT: dict[int | str, dict[str, Any]] = {404: {"description": "Unknown agent"}}


class HistoryResponse(BaseModel):
    """One page; `next_cursor` fetches the next (older) one, null when there is none."""

    rows: list[NamedCall]
    next_cursor: str | None


async def history_filter(
    state: Annotated[ApiState, Depends(get_state)],
    caller: Agent,
    tool: Annotated[str | None, Query(max_length=64)] = None,
    version: Annotated[str | None, Query(max_length=64)] = None,
    agent: Annotated[str | None, Query(max_length=64, description="Agent name.")] = None,
    status: ToolStatus | None = None,
    since: Annotated[
        float | None, Query(allow_inf_nan=False, description="Queued at or after (Unix time).")
    ] = None,
    until: Annotated[
        float | None, Query(allow_inf_nan=False, description="Queued before (Unix time).")
    ] = None,
    parent: Annotated[
        str | None,
        Query(max_length=128, description="Only the calls made for this Task call."),
    ] = None,
) -> HistoryFilter:
    """The rows asked for. Agents see their own calls only; operators see every agent's."""
    agent_id: str | None = caller.id
    if caller.role.includes(Role.OPERATOR):
        agent_id = None
        if agent is not None:
            profile = await run_in_threadpool(state.agents.get, agent)
            if profile is None:
                raise HTTPException(404, f"no agent named {agent!r}")
            agent_id = profile.id
    return HistoryFilter(
        tool=tool,
        version=version,
        agent_id=agent_id,
        status=None if status is None else status.value,
        since=since,
        until=until,
        parent_call_id=parent,
    )


Filter = Annotated[HistoryFilter, Depends(history_filter)]


@router.get("/v1/history", responses=UNKNOWN_AGENT)
async def history(
    state: Annotated[ApiState, Depends(get_state)],
    where: Filter,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> HistoryResponse:
    """Calls newest first, a page at a time."""
    try:
        page = await run_in_threadpool(
            lambda: state.history.query(where, limit=limit, cursor=cursor)
        )
    except InvalidCursor as exc:
        raise HTTPException(422, str(exc)) from exc
    ids = {row.agent_id for row in page.rows if row.agent_id}
    names = await run_in_threadpool(state.agents.names, ids)
    rows = [
        NamedCall(**row.model_dump(), agent_name=names.get(row.agent_id or "")) for row in page.rows
    ]
    return HistoryResponse(rows=rows, next_cursor=page.next_cursor)


@router.get(
    "/v1/history/export",
    response_class=StreamingResponse,
    responses={
        **UNKNOWN_AGENT,
        200: {"content": {"text/csv": {}, "application/json": {}}, "description": "The rows"},
    },
)
async def export_history(
    state: Annotated[ApiState, Depends(get_state)],
    where: Filter,
    format: ExportFormat = "json",
) -> StreamingResponse:
    """Every matching row, newest first, streamed: CSV (RFC 4180, for spreadsheets) or a
    JSON array of the rows /v1/history returns."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return StreamingResponse(
        # A sync iterator: Starlette runs it in a thread.
        export(_named(state.history.rows(where), state.agents), format),
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="history-{stamp}.{format}"'},
    )


def _named(rows: Iterable[dict[str, Any]], agents: AgentStore) -> Iterator[dict[str, Any]]:
    """`rows` with their agent's name, each agent looked up once."""
    names: dict[str, str | None] = {}
    for row in rows:
        agent_id = row.get("agent_id")
        if agent_id and agent_id not in names:
            names[agent_id] = agents.names([agent_id]).get(agent_id)
        yield {**row, "agent_name": names.get(agent_id) if agent_id else None}

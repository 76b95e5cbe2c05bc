"""Sub-agent definitions for the Task tool: list and read (anyone), register and remove
(admins). Definitions in the workspace's `.toolrun/agents/` are listed too, read-only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import BaseModel

from toolrun.api.auth import Admin, Agent
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.levels import PermissionLevel
from toolrun.subagents.catalog import Entry, Source, SubAgentCatalog
from toolrun.subagents.definition import SubAgent, SubAgentError

router = APIRouter(prefix="/v1/subagents", tags=["subagents"])
State = Annotated[ApiState, Depends(get_state)]
Name = Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")]


class SubAgentSummary(BaseModel):
    """One definition as listed (without its prompt); `problem` when its file is bad."""

    name: str
    source: Source
    path: str | None
    description: str | None = None
    tools: list[str] | None = None
    ceiling: PermissionLevel | None = None
    model: str | None = None
    max_turns: int | None = None
    problem: str | None = None

    @classmethod
    def of(cls, entry: Entry) -> SubAgentSummary:
        fields = {} if entry.agent is None else entry.agent.model_dump(exclude={"name", "prompt"})
        return cls(
            name=entry.name,
            source=entry.source,
            path=entry.path,
            problem=entry.problem,
            **fields,
        )


def _catalog(state: ApiState) -> SubAgentCatalog:
    return SubAgentCatalog(state.subagents, state.context.workspace)


@router.get("")
async def list_subagents(state: State, agent: Agent) -> list[SubAgentSummary]:
    """Every definition, registered and in the workspace, by name."""
    entries = await run_in_threadpool(_catalog(state).entries)
    return [SubAgentSummary.of(entry) for entry in entries]


@router.get("/{name}", responses={404: {"description": "No such sub-agent"}})
async def get_subagent(name: Name, state: State, agent: Agent) -> SubAgent:
    """One definition, its system prompt included."""
    try:
        return await run_in_threadpool(_catalog(state).find, name)
    except SubAgentError as exc:
        raise HTTPException(404, str(exc)) from exc


@router.put(
    "/{name}",
    status_code=201,
    responses={200: {"description": "Replaced"}, 422: {"description": "Invalid definition"}},
)
async def put_subagent(name: Name, body: SubAgent, state: State, admin: Admin) -> Response:
    """Register a definition (201), or replace the registered one of that name (200)."""
    if body.name != name:
        raise HTTPException(422, f"the definition is named {body.name!r}, not {name!r}")
    created = await run_in_threadpool(lambda: state.subagents.put(body, by=admin.name))
    return Response(body.model_dump_json(), 201 if created else 200, media_type="application/json")


@router.delete("/{name}", status_code=204, responses={404: {"description": "Not registered"}})
async def delete_subagent(name: Name, state: State, admin: Admin) -> None:
    """Unregister a definition (workspace files are removed by deleting them)."""
    if not await run_in_threadpool(state.subagents.remove, name):
        raise HTTPException(404, f"no registered sub-agent named {name!r}")

"""Agent routes: who am I (anyone), and profile management (admins only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from toolrun.api.auth import Admin, Agent
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.agents import AgentError, AgentProfile, unknown_entries_message
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

router = APIRouter(prefix="/v1/agents", tags=["agents"])
State = Annotated[ApiState, Depends(get_state)]


class AgentView(BaseModel):
    """An agent profile as the API shows it (never its token)."""

    id: str
    name: str
    role: Role
    ceiling: PermissionLevel
    tools: list[str] | None
    pins: list[str]

    @classmethod
    def of(cls, profile: AgentProfile) -> AgentView:
        return cls(
            id=profile.id,
            name=profile.name,
            role=profile.role,
            ceiling=profile.ceiling,
            tools=None if profile.tools is None else sorted(profile.tools),
            pins=[f"{name}@{wanted}" for name, wanted in profile.pins],
        )


class AgentRequest(BaseModel):
    """A new agent profile."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    ceiling: PermissionLevel
    role: Role = Role.AGENT
    tools: list[str] | None = Field(
        None, description='Tool names and "tag:<tag>" entries; null: every tool.'
    )
    pins: list[str] = Field(default_factory=list, description='e.g. ["grep@^1.2"]')


class CreatedAgent(BaseModel):
    """The new profile and its token, shown this once."""

    agent: AgentView
    token: str


@router.get("/me")
async def whoami(agent: Agent) -> AgentView:
    """The profile of the token in use."""
    return AgentView.of(agent)


class WarningView(BaseModel):
    at: float
    kind: str
    message: str


@router.get("/{agent_id}/warnings", responses={404: {}})
async def agent_warnings(
    agent_id: Annotated[str, Path(max_length=64)], state: State, caller: Agent
) -> list[WarningView]:
    """Warnings for an agent, newest first (a plugin it used was removed): its own, or
    any agent's for operators."""
    if caller.id != agent_id and not caller.role.includes(Role.OPERATOR):
        raise HTTPException(404, f"no agent with id {agent_id!r}")
    found = await run_in_threadpool(state.warnings.of, agent_id)
    return [WarningView(at=w.at, kind=w.kind, message=w.message) for w in found]


@router.get("")
async def list_agents(state: State, admin: Admin) -> list[AgentView]:
    """Every active profile."""
    return [AgentView.of(profile) for profile in await run_in_threadpool(state.agents.list)]


@router.post("", status_code=201)
async def create_agent(body: AgentRequest, state: State, admin: Admin) -> CreatedAgent:
    """A new profile; its token is in this answer and nowhere else. A tool set entry that
    names no registered tool or tag is refused (422)."""
    unknown = state.registry.unknown_entries(body.tools or [])
    if unknown:
        raise HTTPException(422, unknown_entries_message(unknown))
    try:
        profile, token = await run_in_threadpool(
            lambda: state.agents.create(
                body.name, ceiling=body.ceiling, role=body.role, tools=body.tools, pins=body.pins
            )
        )
    except AgentError as exc:
        raise HTTPException(422, str(exc)) from exc
    return CreatedAgent(agent=AgentView.of(profile), token=token)


@router.delete("/{name}", status_code=204)
async def revoke_agent(
    name: Annotated[str, Path(max_length=64)], state: State, admin: Admin
) -> None:
    """Revoke a profile's token for good."""
    if not await run_in_threadpool(state.agents.revoke, name):
        raise HTTPException(404, f"no agent named {name!r}")
    state.tokens.forget(name)

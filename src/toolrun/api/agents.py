"""Agent routes: who am I (anyone), and profile management (admins only)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Path
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolrun.api.auth import Admin, Agent
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.agents import AgentError, AgentProfile, unknown_entries_message
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.quotas import MAX_COUNT, MAX_RATE_PER_S, NO_QUOTA, Quota
from toolrun.permissions.roles import Role

router = APIRouter(prefix="/v1/agents", tags=["agents"])
State = Annotated[ApiState, Depends(get_state)]
AgentName = Annotated[str, Path(max_length=64)]
QuotaName = Literal["rate_per_s", "burst", "max_in_flight", "max_queued"]


class QuotaView(BaseModel):
    """An agent's quotas in force (0: no limit): its own where it sets them (`own`), the
    platform's defaults elsewhere."""

    rate_per_s: float = Field(description="Calls queued per second, on average.")
    burst: float = Field(description="Calls it may queue at once above its rate.")
    max_in_flight: int = Field(description="Calls queued or running.")
    max_queued: int = Field(description="Calls waiting for a worker.")
    own: list[str] = Field(description="The limits its profile sets.")

    @classmethod
    def of(cls, quota: Quota, defaults: Quota) -> QuotaView:
        return cls(**quota.shown(defaults))


class AgentView(BaseModel):
    """An agent profile as the API shows it (never its token)."""

    id: str
    name: str
    role: Role
    ceiling: PermissionLevel
    tools: list[str] | None
    pins: list[str]
    quota: QuotaView

    @classmethod
    def of(cls, profile: AgentProfile, defaults: Quota) -> AgentView:
        return cls(
            id=profile.id,
            name=profile.name,
            role=profile.role,
            ceiling=profile.ceiling,
            tools=None if profile.tools is None else sorted(profile.tools),
            pins=[f"{name}@{wanted}" for name, wanted in profile.pins],
            quota=QuotaView.of(profile.quota, defaults),
        )


class UsageView(BaseModel):
    """What an agent uses of its quotas now, and how many calls they refused."""

    queued: int = Field(description="Calls waiting for a worker.")
    in_flight: int = Field(description="Calls queued or running.")
    throttled: dict[str, int] = Field(description="Calls refused, by quota, since Redis started.")


class AgentDetail(AgentView):
    """A profile with its current use."""

    usage: UsageView


class QuotaRequest(BaseModel):
    """Limits to set (0: no limit); the names in `reset` go back to the platform's
    defaults. A limit left out is unchanged."""

    model_config = ConfigDict(extra="forbid")

    rate_per_s: float | None = Field(None, ge=0, le=MAX_RATE_PER_S, allow_inf_nan=False)
    burst: int | None = Field(None, ge=0, le=MAX_COUNT)
    max_in_flight: int | None = Field(None, ge=0, le=MAX_COUNT)
    max_queued: int | None = Field(None, ge=0, le=MAX_COUNT)
    reset: list[QuotaName] = Field(default_factory=list)

    @model_validator(mode="after")
    def _in_range(self) -> QuotaRequest:
        problem = self.limits().problem()
        if problem is not None:
            raise ValueError(problem)
        return self

    def limits(self) -> Quota:
        return Quota(
            rate_per_s=self.rate_per_s,
            burst=self.burst,
            max_in_flight=self.max_in_flight,
            max_queued=self.max_queued,
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
    quota: QuotaRequest | None = Field(None, description="Its own limits (default: none).")


class CreatedAgent(BaseModel):
    """The new profile and its token, shown this once."""

    agent: AgentView
    token: str


@router.get("/me")
async def whoami(agent: Agent, state: State) -> AgentDetail:
    """The profile of the token in use, with its quotas and what it uses of them."""
    return await run_in_threadpool(_detail, state, agent)


def _detail(state: ApiState, profile: AgentProfile) -> AgentDetail:
    use = state.queues.of_agent(profile.id)
    throttled = state.lifecycle.quotas.throttled() if state.lifecycle.quotas else []
    usage = UsageView(
        queued=use.queued,
        in_flight=use.in_flight,
        throttled={item.quota: item.count for item in throttled if item.agent == profile.id},
    )
    view = AgentView.of(profile, state.lifecycle.default_quota)
    return AgentDetail(**view.model_dump(), usage=usage)


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
    defaults = state.lifecycle.default_quota
    profiles = await run_in_threadpool(state.agents.list)
    return [AgentView.of(profile, defaults) for profile in profiles]


@router.get("/{name}", responses={404: {}})
async def show_agent(name: AgentName, state: State, admin: Admin) -> AgentDetail:
    """One profile, with its quotas and what it uses of them."""
    profile = await run_in_threadpool(state.agents.get, name)
    if profile is None:
        raise HTTPException(404, f"no agent named {name!r}")
    return await run_in_threadpool(_detail, state, profile)


@router.patch("/{name}/quota", responses={404: {}, 422: {}})
async def set_quota(name: AgentName, body: QuotaRequest, state: State, admin: Admin) -> AgentDetail:
    """Change an agent's quotas; running API processes apply them within 5 s."""
    try:
        profile = await run_in_threadpool(
            lambda: state.agents.set_quota(name, body.limits(), reset=body.reset)
        )
    except AgentError as exc:
        raise HTTPException(404, str(exc)) from exc
    state.tokens.forget(name)
    return await run_in_threadpool(_detail, state, profile)


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
                body.name,
                ceiling=body.ceiling,
                role=body.role,
                tools=body.tools,
                pins=body.pins,
                quota=NO_QUOTA if body.quota is None else body.quota.limits(),
            )
        )
    except AgentError as exc:
        raise HTTPException(422, str(exc)) from exc
    return CreatedAgent(agent=AgentView.of(profile, state.lifecycle.default_quota), token=token)


@router.delete("/{name}", status_code=204)
async def revoke_agent(name: AgentName, state: State, admin: Admin) -> None:
    """Revoke a profile's token for good."""
    if not await run_in_threadpool(state.agents.revoke, name):
        raise HTTPException(404, f"no agent named {name!r}")
    state.tokens.forget(name)

"""Bearer-token authentication and role checks for every API route but /healthz and the docs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from toolrun.api.state import ApiState, get_state
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.roles import Role
from toolrun.permissions.security_log import EventKind

_bearer = HTTPBearer(auto_error=False, description="An agent token from `toolrun agents create`.")


async def current_agent(
    request: Request,
    state: Annotated[ApiState, Depends(get_state)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> AgentProfile:
    """The caller's profile; 401 without a valid bearer token."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        reason = "missing bearer token (Authorization: Bearer <token>)"
    else:
        token = credentials.credentials
        profile = state.tokens.cached(token) or await run_in_threadpool(
            state.tokens.authenticate, token
        )
        if profile is not None:
            return profile
        reason = "invalid or revoked token"
    await run_in_threadpool(
        state.security.record,
        EventKind.AUTH,
        reason,
        target=f"{request.method} {request.url.path}",
    )
    raise HTTPException(401, reason, headers={"WWW-Authenticate": "Bearer"})


Agent = Annotated[AgentProfile, Depends(current_agent)]


def require(role: Role) -> Callable[..., Awaitable[AgentProfile]]:
    """A dependency admitting callers whose role includes `role` (403 for the others)."""

    async def check(
        request: Request, agent: Agent, state: Annotated[ApiState, Depends(get_state)]
    ) -> AgentProfile:
        if agent.role.includes(role):
            return agent
        reason = f"agent {agent.name} ({agent.role}) may not do this; it needs the {role} role"
        await run_in_threadpool(
            state.security.record,
            EventKind.FORBIDDEN,
            reason,
            agent_id=agent.id,
            target=f"{request.method} {request.url.path}",
        )
        raise HTTPException(403, reason)

    return check


Operator = Annotated[AgentProfile, Depends(require(Role.OPERATOR))]
Admin = Annotated[AgentProfile, Depends(require(Role.ADMIN))]

"""The approval inbox over HTTP: list parked calls, approve or deny one, standing rules."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from structlog.contextvars import bound_contextvars

from toolrun.api.auth import Operator
from toolrun.api.lifecycle import respond
from toolrun.api.schemas import CALL_ID_PATTERN
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.inbox import ApprovalRecord, ApprovalStatus
from toolrun.permissions.preview import preview
from toolrun.permissions.rules import RuleError, StandingRule
from toolrun.tools.model import ToolResult

router = APIRouter(tags=["approvals"])
State = Annotated[ApiState, Depends(get_state)]
CallId = Annotated[str, Path(pattern=CALL_ID_PATTERN)]


class DecisionRequest(BaseModel):
    """An operator's approve or deny, with an optional reason shown to the caller."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(None, max_length=1000)


class RuleRequest(BaseModel):
    """A standing rule: calls of `tool_name` (by `agent_name`, matching `command` and
    `arguments` where given) run without asking."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(min_length=1, max_length=64)
    agent_name: str | None = Field(None, max_length=64)
    command: str | None = Field(None, min_length=1, max_length=4096)
    arguments: dict[str, Any] | None = None


@router.get("/v1/approvals", response_model=list[ApprovalRecord])
async def list_approvals(
    state: State,
    operator: Operator,
    status: Annotated[ApprovalStatus | None, Query(description="Default: every status.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[ApprovalRecord]:
    """Calls that needed approval, newest first (expired ones are settled first)."""
    await expire_overdue(state)
    return await run_in_threadpool(state.inbox.list, status, limit)


@router.get("/v1/approvals/{call_id}/preview", responses={404: {"description": "Not parked"}})
async def preview_call(call_id: CallId, state: State, operator: Operator) -> dict[str, Any]:
    """What the parked call would do, as the workspace is now: for write and edit the
    file's unified diff (`kind: diff`), for bash the working directory and the commands
    its line runs (`kind: command`), else `kind: none`."""
    record = await run_in_threadpool(state.inbox.get, call_id)
    if record is None:
        raise HTTPException(404, f"no call {call_id} in the approval inbox")
    workspace = state.context.workspace
    return await run_in_threadpool(preview, record.tool_name, record.arguments, workspace)


@router.post(
    "/v1/calls/{call_id}/approve",
    response_model=ToolResult,
    responses={409: {"description": "Not awaiting approval"}},
)
async def approve_call(
    call_id: CallId, state: State, operator: Operator, body: DecisionRequest | None = None
) -> JSONResponse:
    """Run this one parked call (and no other) on its level's workers."""
    reason = body.reason if body else None
    with bound_contextvars(call_id=call_id):  # on every line logged while it is decided
        queued = await run_in_threadpool(
            state.lifecycle.approve, call_id, by=operator.name, reason=reason
        )
    return respond(queued)


@router.post(
    "/v1/calls/{call_id}/deny",
    response_model=ToolResult,
    responses={409: {"description": "Not awaiting approval"}},
)
async def deny_call(
    call_id: CallId, state: State, operator: Operator, body: DecisionRequest | None = None
) -> JSONResponse:
    """End this parked call as denied; the caller sees who denied it and why."""
    reason = body.reason if body else None
    with bound_contextvars(call_id=call_id):
        denied = await run_in_threadpool(
            state.lifecycle.deny, call_id, by=operator.name, reason=reason
        )
    return respond(denied)


@router.get("/v1/approval-rules", response_model=list[StandingRule])
async def list_rules(state: State, operator: Operator) -> list[StandingRule]:
    """Standing rules, oldest first."""
    return await run_in_threadpool(state.rules.list)


@router.post("/v1/approval-rules", response_model=StandingRule, status_code=201)
async def add_rule(body: RuleRequest, state: State, operator: Operator) -> StandingRule:
    """Pre-approve matching calls; a command is matched on its parsed words."""
    if state.registry.get(body.tool_name) is None:
        raise HTTPException(404, state.registry.missing(body.tool_name))
    agent = None
    if body.agent_name is not None:
        agent = await run_in_threadpool(state.agents.get, body.agent_name)
        if agent is None:
            raise HTTPException(404, f"no agent named {body.agent_name!r}")
    try:
        return await run_in_threadpool(
            lambda: state.rules.add(
                body.tool_name,
                created_by=operator.name,
                agent_id=None if agent is None else agent.id,
                agent_name=body.agent_name,
                command=body.command,
                arguments=body.arguments,
            )
        )
    except RuleError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.delete("/v1/approval-rules/{rule_id}", status_code=204)
async def remove_rule(
    rule_id: Annotated[str, Path(max_length=64)], state: State, operator: Operator
) -> None:
    if not await run_in_threadpool(state.rules.remove, rule_id):
        raise HTTPException(404, f"no approval rule with id {rule_id!r}")


async def expire_overdue(state: ApiState) -> int:
    """Deny every parked call past its deadline; returns how many."""
    return await run_in_threadpool(state.lifecycle.expire)

"""The approval inbox over HTTP: list parked calls, approve or deny one, standing rules."""

from __future__ import annotations

import contextlib
import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from structlog.contextvars import bound_contextvars

from toolrun.api.admission import publish, remember, respond
from toolrun.api.auth import Operator
from toolrun.api.schemas import CALL_ID_PATTERN
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.inbox import ApprovalRecord, ApprovalStatus
from toolrun.permissions.rules import RuleError, StandingRule
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus, lineage_of

log = logging.getLogger(__name__)
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


@router.post(
    "/v1/calls/{call_id}/approve",
    response_model=ToolResult,
    responses={409: {"description": "Not awaiting approval"}},
)
async def approve_call(
    call_id: CallId, state: State, operator: Operator, body: DecisionRequest | None = None
) -> JSONResponse:
    """Run this one parked call (and no other) on its level's workers."""
    with bound_contextvars(call_id=call_id):  # on every line logged while it is decided
        return await _approve(state, call_id, operator, body)


async def _approve(
    state: ApiState, call_id: str, operator: AgentProfile, body: DecisionRequest | None
) -> JSONResponse:
    parked = await run_in_threadpool(state.inbox.get, call_id)
    waiting = None if parked is None else await _awaiting(state, call_id)
    sender = None if parked is None else parked.agent_id
    if sender is not None and not await run_in_threadpool(state.agents.is_active, sender):
        raise HTTPException(409, f"the agent that sent {call_id!r} was revoked; deny it")
    record = await _decide(state, call_id, operator, body, approved=True)
    tool = state.registry.get(record.tool_name, record.tool_version)
    lineage = {} if waiting is None else lineage_of(waiting.metadata)
    call = ToolCall(
        id=record.call_id,
        tool_name=record.tool_name,
        version=record.tool_version,
        arguments=record.arguments,
        agent_id=record.agent_id,
        **lineage,
    )
    if tool is None:  # unregistered while it waited
        gone = _ended(
            record, ToolStatus.ERROR, state.registry.missing(call.tool_name, call.version), waiting
        )
        await state.store.finish(gone)
        await remember(state, gone, record.arguments)
        raise HTTPException(409, f"tool {record.tool_name}@{record.tool_version} is gone")
    queued = ToolResult.accepted(call, ToolStatus.QUEUED, approved_by=operator.name)
    try:
        await state.store.replace(queued)
        await publish(
            state,
            tool,
            call,
            approved_by=operator.name,
            queued_at=queued.metadata["queued_at"],
            limit_s=None if waiting is None else waiting.metadata.get("time_limit_s"),
        )
    except Exception:  # undo, so that the inbox and the call record agree: still pending
        await run_in_threadpool(state.inbox.reopen, call_id, ApprovalStatus.APPROVED)
        with contextlib.suppress(Exception):
            undone = _ended(record, ToolStatus.AWAITING_APPROVAL, record.warning, waiting)
            await state.store.replace(undone)
        raise
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
    with bound_contextvars(call_id=call_id):
        return await _deny(state, call_id, operator, body)


async def _deny(
    state: ApiState, call_id: str, operator: AgentProfile, body: DecisionRequest | None
) -> JSONResponse:
    waiting = None
    if await run_in_threadpool(state.inbox.get, call_id) is not None:
        waiting = await _awaiting(state, call_id)
    record = await _decide(state, call_id, operator, body, approved=False)
    why = f"denied by {operator.name}" + (f": {record.reason}" if record.reason else "")
    result = _ended(record, ToolStatus.DENIED, f"{record.warning} — {why}", waiting)
    try:
        await state.store.finish(result)
    except Exception:  # the caller would never learn of it: leave it pending instead
        await run_in_threadpool(state.inbox.reopen, call_id, ApprovalStatus.DENIED)
        raise
    await remember(state, result, record.arguments)
    return respond(result)


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
    expired = await run_in_threadpool(state.inbox.expire)
    for record in expired:
        with bound_contextvars(call_id=record.call_id):
            await _deny_expired(state, record)
    if expired:
        log.info("%d calls waiting for approval expired", len(expired))
    return len(expired)


async def _deny_expired(state: ApiState, record: ApprovalRecord) -> None:
    current = await state.store.get(record.call_id)
    if current is None or current.status is not ToolStatus.AWAITING_APPROVAL:
        return  # the call has moved on (a DAG run cancelled it): only the entry expires
    ttl = state.settings.approval_ttl_s
    message = f"{record.warning} — not approved within {ttl:g} s, so denied"
    result = _ended(record, ToolStatus.DENIED, message, current)
    try:
        await state.store.finish(result)
    except Exception:  # pending again: the next sweep tries once more
        await run_in_threadpool(state.inbox.reopen, record.call_id, ApprovalStatus.EXPIRED)
        raise
    await remember(state, result, record.arguments)


async def _awaiting(state: ApiState, call_id: str) -> ToolResult:
    """The call's record, which must still say awaiting approval; 409 otherwise (a call
    cancelled meanwhile, e.g. by its DAG run, must never run)."""
    current = await state.store.get(call_id)
    if current is None:
        raise HTTPException(409, f"call {call_id!r} has no record awaiting approval")
    if current.status is not ToolStatus.AWAITING_APPROVAL:
        raise HTTPException(
            409, f"call {call_id!r} is not awaiting approval (it is {current.status})"
        )
    return current


async def _decide(
    state: ApiState,
    call_id: str,
    operator: AgentProfile,
    body: DecisionRequest | None,
    *,
    approved: bool,
) -> ApprovalRecord:
    """Record the decision on a pending call; 404 unknown, 409 no longer pending."""
    reason = body.reason if body else None
    record = await run_in_threadpool(
        state.inbox.decide, call_id, approved=approved, by=operator.name, reason=reason
    )
    if record is not None:
        return record
    known = await run_in_threadpool(state.inbox.get, call_id)
    if known is None:
        raise HTTPException(404, f"no call {call_id!r} in the approval inbox")
    if known.status == ApprovalStatus.PENDING:
        raise HTTPException(409, f"call {call_id!r} waited too long for approval; it expires")
    raise HTTPException(409, f"call {call_id!r} is not awaiting approval (it is {known.status})")


def _ended(
    record: ApprovalRecord, status: ToolStatus, error: str, current: ToolResult | None
) -> ToolResult:
    """The call's state after a decision; `current`: its record while it waited."""
    return ToolResult(
        call_id=record.call_id,
        tool_name=record.tool_name,
        tool_version=record.tool_version,
        status=status,
        error=error,
        metadata={
            "agent_id": record.agent_id,
            "queued_at": record.created_at,
            "execution_time_ms": None,
            "decided_by": record.decided_by,
            "policy": record.policy,
            "risk": record.risk,
            **({} if current is None else lineage_of(current.metadata)),
        },
    )

"""What happens to a call the API has accepted: blocked, parked for approval, or enqueued."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from typing import Any

from fastapi import HTTPException
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.exc import IntegrityError

from toolrun.api.state import ApiState
from toolrun.history import record_of
from toolrun.monitoring import record_call_async
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.inbox import ApprovalRecord
from toolrun.permissions.policy import Policy, Verdict
from toolrun.permissions.security_log import EventKind
from toolrun.tools.base import Tool
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.validation import with_defaults
from toolrun.workers.dispatch import enqueue
from toolrun.workers.presence import has_workers_async


async def end_now(state: ApiState, call: ToolCall, status: ToolStatus, error: str) -> JSONResponse:
    """End the call before anything is enqueued: its record and history row."""
    result = ToolResult.accepted(call, status)
    result.error = error
    await create_record(state, result)
    await remember(state, result, call.arguments)
    return respond(result)


async def stranded(
    state: ApiState, tool: Tool, call: ToolCall, arguments: dict[str, Any]
) -> JSONResponse | None:
    """An error at once for a call bound to a machine with no live worker of its level (it
    would wait in that machine's queue forever); None for any other call."""
    machine = tool.machine(arguments)
    if machine is None:
        return None
    if await has_workers_async(state.redis, machine, tool.descriptor.permission):
        return None
    return await end_now(state, call, ToolStatus.ERROR, tool.stranded(arguments, machine))


async def block(state: ApiState, call: ToolCall, reason: str) -> JSONResponse:
    """End the call as blocked before anything is enqueued, and log it."""
    response = await end_now(state, call, ToolStatus.BLOCKED, reason)
    await run_in_threadpool(
        state.security.record,
        EventKind.BLOCKED_CALL,
        reason,
        agent_id=call.agent_id,
        call_id=call.id,
        tool_name=call.tool_name,
    )
    return response


async def pre_approval(
    state: ApiState,
    agent: AgentProfile,
    call: ToolCall,
    arguments: dict[str, Any],
    verdict: Verdict,
) -> str | None:
    """Who approved this call in advance (auto-approve, a standing rule), or None."""
    if verdict.policy is Policy.CONFIRM and state.settings.auto_approve:
        return "auto_approve"
    rule = await run_in_threadpool(state.rules.first_match, call.tool_name, agent.id, arguments)
    return None if rule is None else f"rule {rule.id}"


async def park(
    state: ApiState, agent: AgentProfile, call: ToolCall, verdict: Verdict
) -> JSONResponse:
    """Store the call as awaiting_approval, with an inbox entry for the operators."""
    result = ToolResult.accepted(call, ToolStatus.AWAITING_APPROVAL, policy=verdict.policy.value)
    result.metadata["risk"] = verdict.risk.value
    result.error = verdict.warning
    await create_record(state, result)
    record = ApprovalRecord.parked(call, agent.name, verdict, state.settings.approval_ttl_s)
    try:
        await run_in_threadpool(state.inbox.park, record)
    except IntegrityError as exc:  # an old call's id, its record gone from Redis by now
        await state.store.forget(call.id)
        raise HTTPException(409, f"a call with id {call.id!r} already exists") from exc
    except Exception:
        await state.store.forget(call.id)
        raise
    return respond(result)


async def publish(
    state: ApiState,
    tool: Tool,
    call: ToolCall,
    *,
    approved_by: str | None,
    queued_at: float,
    limit_s: float | None = None,
) -> None:
    """Send the call to the workers of its tool's level (kombu blocks: off the event loop);
    `limit_s` shortens the tool's time limit (a DAG node's timeout)."""
    arguments = with_defaults(tool.descriptor.parameters, call.arguments)
    tool_limit_s = tool.time_limit_s(arguments, state.settings)
    send = functools.partial(
        enqueue,
        state.celery,
        call,
        queue=tool.queue(arguments),
        parameters=tool.descriptor.parameters,
        tool_limit_s=tool_limit_s if limit_s is None else min(tool_limit_s, limit_s),
        kill_grace_s=state.settings.kill_grace_s,
        approved_by=approved_by,
        queued_at=queued_at,
    )
    context = contextvars.copy_context()  # the call's id, for what the publisher logs
    await asyncio.get_running_loop().run_in_executor(state.publisher, context.run, send)


async def remember(state: ApiState, result: ToolResult, arguments: dict[str, Any]) -> None:
    """Count a call the API ended itself (blocked, denied, expired) and write its history
    row."""
    await record_call_async(state.redis, result.tool_name, result.status, None)
    tool = state.registry.get(result.tool_name, result.tool_version)
    parameters = None if tool is None else tool.descriptor.parameters
    await run_in_threadpool(state.history.write, record_of(result, arguments, parameters))


async def create_record(state: ApiState, result: ToolResult) -> None:
    """Store a call's first state; 409 when its id is taken."""
    if not await state.store.create(result):
        raise HTTPException(409, f"a call with id {result.call_id!r} already exists")


def respond(result: ToolResult) -> JSONResponse:
    """200 for a call that has ended, 202 for one still queued, running or awaiting approval."""
    code = 200 if result.final else 202
    return JSONResponse(result.model_dump(mode="json"), status_code=code)

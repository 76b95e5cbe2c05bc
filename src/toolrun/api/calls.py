"""Call routes: submit (authenticate, validate, check, then block, park or enqueue), look up."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.responses import Response
from structlog.contextvars import bound_contextvars

from toolrun.api.admission import (
    block,
    create_record,
    park,
    pre_approval,
    publish,
    respond,
    stranded,
)
from toolrun.api.auth import Agent
from toolrun.api.schemas import CALL_ID_PATTERN, CallRequest
from toolrun.api.state import ApiState, get_state
from toolrun.api.tools import unknown_tool
from toolrun.errors import InvalidArguments, SandboxViolation
from toolrun.permissions.agents import AgentProfile, Role
from toolrun.tools.base import Tool
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.validation import validate_arguments, with_defaults

router = APIRouter(prefix="/v1/calls", tags=["calls"])
State = Annotated[ApiState, Depends(get_state)]
CallId = Annotated[str, Path(pattern=CALL_ID_PATTERN)]
Wait = Annotated[float, Query(ge=0, description="Seconds to wait for the result.")]
RESULT_RESPONSES: dict[int | str, dict[str, object]] = {
    202: {"model": ToolResult, "description": "Accepted; not finished within `wait`"},
    401: {"description": "Missing or invalid bearer token"},
    404: {"description": "Unknown tool"},
    409: {"description": "A call with this id exists"},
    422: {"description": "Invalid arguments"},
    503: {"description": "Broker unavailable"},
}


@router.post("", response_model=ToolResult, responses=RESULT_RESPONSES)
async def submit_call(body: CallRequest, state: State, agent: Agent, wait: Wait = 0) -> Response:
    """Check a call, then enqueue it on its permission level's queue.

    A tool outside the agent's tool set, pins or ceiling, or a call the sandbox refuses,
    ends at once as `blocked`. A call whose policy is confirm or dangerous is parked as
    `awaiting_approval` (202) unless a standing rule covers it. With `wait`, answers 200
    with the final ToolResult if the call ends in time, else 202 with its current state.
    """
    _check_wait(state, wait)
    pinned = agent.pin(body.tool_name)
    wanted = body.version or (None if pinned is None else str(pinned))
    tool = state.registry.get(body.tool_name, wanted)
    if tool is None:
        raise HTTPException(404, unknown_tool(state, agent, body.tool_name, wanted))
    try:
        validate_arguments(tool.validator, body.arguments)
    except InvalidArguments as exc:
        raise HTTPException(422, f"invalid arguments: {exc}") from exc
    descriptor = tool.descriptor
    call = ToolCall(
        id=body.id or uuid.uuid4().hex,
        tool_name=descriptor.name,
        version=descriptor.version,
        arguments=body.arguments,
        agent_id=agent.id,
    )
    with bound_contextvars(call_id=call.id):  # on every line logged while it is admitted
        return await _admit(state, agent, tool, call, wait)


async def _admit(
    state: ApiState, agent: AgentProfile, tool: Tool, call: ToolCall, wait: float
) -> Response:
    """Block, park or enqueue a valid call (`submit_call`)."""
    descriptor = tool.descriptor
    refusal = agent.refusal(descriptor)
    if refusal is not None:
        return await block(state, call, refusal)
    arguments = with_defaults(descriptor.parameters, call.arguments)
    try:
        verdict = tool.verdict(arguments, state.context)
    except SandboxViolation as exc:
        return await block(state, call, str(exc))
    gone = await stranded(state, tool, call, arguments)
    if gone is not None:
        return gone
    result = ToolResult.accepted(call, ToolStatus.QUEUED)
    approved_by = None
    if verdict.needs_approval:
        approved_by = await pre_approval(state, agent, call, arguments, verdict)
        if approved_by is None:
            return await park(state, agent, call, verdict)
        result.metadata["approved_by"] = approved_by
    await create_record(state, result)
    try:
        await publish(
            state,
            tool,
            call,
            approved_by=approved_by,
            queued_at=result.metadata["queued_at"],
        )
    except Exception:
        await state.store.forget(call.id)  # not queued after all: no record, id reusable
        raise
    return await _awaited(state, result, wait)


@router.get(
    "/{call_id}",
    response_model=ToolResult,
    responses={202: {"model": ToolResult}, 404: {"description": "No such call"}},
)
async def get_call(call_id: CallId, state: State, agent: Agent, wait: Wait = 0) -> Response:
    """A call's current state, or its result once it has ended (agents see their own calls).

    With `wait`, waits up to that many seconds for the call to end.
    """
    _check_wait(state, wait)
    result = await state.store.get(call_id)
    if result is None or not _visible(result, agent):
        raise HTTPException(404, f"no call with id {call_id!r}")
    return await _awaited(state, result, wait)


def _check_wait(state: ApiState, wait: float) -> None:
    if wait > state.settings.max_wait_s:
        raise HTTPException(422, f"wait must be at most {state.settings.max_wait_s:g} seconds")


def _visible(result: ToolResult, agent: Agent) -> bool:
    return agent.role.includes(Role.OPERATOR) or result.metadata.get("agent_id") == agent.id


async def _awaited(state: ApiState, result: ToolResult, wait: float) -> Response:
    """`result`, or the call's final result if it ends within `wait` seconds."""
    if wait and not result.final:
        finished = await state.store.wait_final(result.call_id, wait)
        if finished is not None:  # already JSON: passed through without a parse
            return Response(finished, media_type="application/json")
        result = await state.store.get(result.call_id) or result
    return respond(result)

"""Call routes: submit (authenticate, validate, check, then block, park or enqueue), look up."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.responses import Response
from structlog.contextvars import bound_contextvars

from toolrun.api.auth import Agent
from toolrun.api.lifecycle import admitted, respond
from toolrun.api.schemas import CALL_ID_PATTERN, CallRequest
from toolrun.api.state import ApiState, get_state
from toolrun.calls.lifecycle import CallIdTaken
from toolrun.errors import InvalidArguments, ToolNotFound
from toolrun.permissions.roles import Role
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus

router = APIRouter(prefix="/v1/calls", tags=["calls"])
State = Annotated[ApiState, Depends(get_state)]
CallId = Annotated[str, Path(pattern=CALL_ID_PATTERN)]
Wait = Annotated[float, Query(ge=0, description="Seconds to wait for the result.")]
RESULT_RESPONSES: dict[int | str, dict[str, object]] = {
    202: {"model": ToolResult, "description": "Accepted; not finished within `wait`"},
    401: {"description": "Missing or invalid bearer token"},
    404: {"description": "Unknown tool"},
    409: {"description": "A call with this id exists and asked for something else"},
    422: {"description": "Invalid arguments"},
    429: {"description": "Over one of the agent's quotas; see Retry-After"},
    503: {"description": "Broker unavailable, or the queue is full; see Retry-After"},
}


@router.post("", response_model=ToolResult, responses=RESULT_RESPONSES)
async def submit_call(body: CallRequest, state: State, agent: Agent, wait: Wait = 0) -> Response:
    """Check a call, then enqueue it on its permission level's queue.

    A call over one of the agent's quotas gets 429, one whose queue is full 503, both with
    Retry-After and nothing recorded. A tool outside the agent's tool set, pins or
    ceiling, or a call the sandbox refuses, ends at once as `blocked`. A call whose policy
    is confirm or dangerous is parked as `awaiting_approval` (202) unless a standing rule
    covers it. With `wait`, answers 200 with the final ToolResult if the call ends in
    time, else 202 with its current state.
    The same request sent again under its id (a retry) answers with that call's state;
    another request under a taken id is a 409.
    """
    _check_wait(state, wait)
    call = ToolCall(
        id=body.id or uuid.uuid4().hex,
        tool_name=body.tool_name,
        version=body.version,
        arguments=body.arguments,
        agent_id=agent.id,
    )
    with bound_contextvars(call_id=call.id):  # on every line logged while it is admitted
        try:
            result = await admitted(
                state, state.lifecycle.admit, call, agent, priority=body.priority, metered=True
            )
        except ToolNotFound as exc:
            raise HTTPException(404, str(exc)) from exc
        except InvalidArguments as exc:
            raise HTTPException(422, f"invalid arguments: {exc}") from exc
        except CallIdTaken as exc:
            result = await _sent_before(state, call, exc)
        if result.final or result.status is ToolStatus.AWAITING_APPROVAL:
            return respond(result)  # nothing to wait for
        return await _awaited(state, result, wait)  # queued, or running (sent before)


async def _sent_before(state: ApiState, call: ToolCall, taken: CallIdTaken) -> ToolResult:
    """The current state of the call already recorded under `call.id` when it asked for
    the same (a client's retry: its answer was lost); otherwise the id is someone else's.

    Raises:
        CallIdTaken: another request (or another agent's) has this id (a 409).
    """
    existing = await state.store.get(call.id)
    if existing is None or await state.store.request(call.id) != call.digest():
        raise CallIdTaken(taken.result, "with a different request")
    return existing


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

"""Call routes: submit (authenticate, validate, check, then block, park or enqueue), look
up one, list those not ended."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from structlog.contextvars import bound_contextvars

from toolrun.api.approvals import expire_overdue
from toolrun.api.auth import Agent
from toolrun.api.lifecycle import admitted, respond
from toolrun.api.schemas import CALL_ID_PATTERN, CallRequest, OpenCall
from toolrun.api.state import ApiState, get_state
from toolrun.calls import keys
from toolrun.calls.fairness import agent_key
from toolrun.calls.lifecycle import CallIdTaken
from toolrun.errors import InvalidArguments, ToolNotFound
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.inbox import ApprovalStatus
from toolrun.permissions.roles import Role
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus

router = APIRouter(prefix="/v1/calls", tags=["calls"])
State = Annotated[ApiState, Depends(get_state)]
CallId = Annotated[str, Path(pattern=CALL_ID_PATTERN)]
Wait = Annotated[float, Query(ge=0, description="Seconds to wait for the result.")]
OpenStatus = Literal["queued", "running", "awaiting_approval"]
_OPEN: frozenset[str] = frozenset(get_args(OpenStatus))
MAX_LISTED = 1000
MAX_SCANNED = 20_000  # open calls read at most for one listing: the most recent
_READ_AT_ONCE = 200  # records read in one MGET while listing
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


@router.get("", response_model=list[OpenCall], responses={404: {"description": "Unknown agent"}})
async def list_calls(
    state: State,
    caller: Agent,
    status: Annotated[OpenStatus | None, Query(description="Default: all three.")] = None,
    agent: Annotated[str | None, Query(max_length=64, description="Agent name.")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LISTED)] = 100,
) -> list[OpenCall]:
    """The calls that have not ended — queued, running, awaiting approval — newest first
    (by when they were queued or parked), in their current state. Agents see their own
    calls only; operators every agent's, or `agent`'s. The calls that ended are in
    /v1/history."""
    agent_id = await _whose(state, caller, agent)
    wanted = _OPEN if status is None else frozenset({status})
    candidates: dict[str, float] = {}
    if wanted & {"queued", "running"}:
        candidates |= await _queued_or_running(state, agent_id)
    if "awaiting_approval" in wanted:
        await expire_overdue(state)
        candidates |= await run_in_threadpool(_parked, state, agent_id)
    # The most recent first by their sets' scores (a quota's recheck moves those), then
    # read, and ordered by when each was queued or parked, as its record says.
    recent = sorted(candidates, key=candidates.__getitem__, reverse=True)[:MAX_SCANNED]
    found = await _current(state, recent, wanted)
    found.sort(key=_queued_at, reverse=True)
    found = found[:limit]
    names = await run_in_threadpool(
        state.agents.names,
        {str(r.metadata["agent_id"]) for r in found if r.metadata.get("agent_id")},
    )
    return [
        OpenCall(**dict(result), agent_name=names.get(str(result.metadata.get("agent_id"))))
        for result in found
    ]


async def _whose(state: ApiState, caller: AgentProfile, agent: str | None) -> str | None:
    """The agent id whose calls are listed, None for every agent's: an agent's own (its
    `agent` is ignored, as in /v1/history); for an operator, `agent`'s or everyone's."""
    if not caller.role.includes(Role.OPERATOR):
        return caller.id
    if agent is None:
        return None
    profile = await run_in_threadpool(state.agents.get, agent)
    if profile is None:
        raise HTTPException(404, f"no agent named {agent!r}")
    return profile.id


async def _queued_or_running(state: ApiState, agent_id: str | None) -> dict[str, float]:
    """Call id → its score (when queued, or when a quota last rechecked it), of the open
    calls of the agent (or of every agent with any: `keys.AGENTS_OPEN`) that the fair
    queues keep (`calls.fairness`)."""
    client = state.store.client
    if agent_id is not None:
        agents = [agent_key(agent_id)]
    else:
        members: Any = await client.smembers(keys.AGENTS_OPEN)
        agents = sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)
    pipe = client.pipeline(transaction=False)
    for each in agents:
        pipe.zrevrange(keys.agent_open(each), 0, MAX_SCANNED - 1, withscores=True)
    found: dict[str, float] = {}
    for entries in await pipe.execute():
        for call_id, score in entries:
            found[call_id.decode() if isinstance(call_id, bytes) else call_id] = score
    return found


def _parked(state: ApiState, agent_id: str | None) -> dict[str, float]:
    """Call id → when parked, of the calls pending in the approval inbox (the agent's)."""
    pending = state.inbox.list(ApprovalStatus.PENDING, MAX_SCANNED, agent_id=agent_id)
    return {record.call_id: record.created_at for record in pending}


async def _current(
    state: ApiState, call_ids: list[str], wanted: frozenset[str]
) -> list[ToolResult]:
    """The records of `call_ids` that are in a `wanted` state now (a call may have moved
    on since it was listed)."""
    found: list[ToolResult] = []
    for start in range(0, len(call_ids), _READ_AT_ONCE):
        chunk = call_ids[start : start + _READ_AT_ONCE]
        raw: Any = await state.store.client.mget([keys.record(call_id) for call_id in chunk])
        for item in raw:
            if item is None:
                continue
            result = ToolResult.model_validate_json(item)
            if result.status.value in wanted:
                found.append(result)
    return found


def _queued_at(result: ToolResult) -> float:
    """When the call was queued (or parked), as its record says; 0 if it does not."""
    when = result.metadata.get("queued_at")
    return float(when) if isinstance(when, int | float) else 0.0


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

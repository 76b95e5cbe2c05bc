"""Call routes: submit (validate, then enqueue or park), and look up."""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.responses import JSONResponse, Response

from toolrun.api.schemas import CALL_ID_PATTERN, CallRequest
from toolrun.api.state import ApiState, get_state
from toolrun.errors import InvalidArguments, SandboxViolation
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.validation import validate_arguments, with_defaults
from toolrun.workers.dispatch import enqueue

router = APIRouter(prefix="/v1/calls", tags=["calls"])
State = Annotated[ApiState, Depends(get_state)]
CallId = Annotated[str, Path(pattern=CALL_ID_PATTERN)]
RESULT_RESPONSES: dict[int | str, dict[str, object]] = {
    202: {"model": ToolResult, "description": "Accepted; not finished within `wait`"},
    404: {"description": "Unknown tool"},
    409: {"description": "A call with this id exists"},
    422: {"description": "Invalid arguments"},
    503: {"description": "Broker unavailable"},
}


@router.post("", response_model=ToolResult, responses=RESULT_RESPONSES)
async def submit_call(
    body: CallRequest,
    state: State,
    wait: Annotated[float, Query(ge=0, description="Seconds to wait for the result.")] = 0,
) -> Response:
    """Validate a call, then enqueue it on its permission level's queue.

    With `wait`, answers 200 with the final ToolResult if the call ends in time, else 202
    with its current state (queued or running), to be fetched from GET /v1/calls/{id}.
    """
    if wait > state.settings.max_wait_s:
        raise HTTPException(422, f"wait must be at most {state.settings.max_wait_s:g} seconds")
    tool = state.registry.get(body.tool_name, body.version)
    if tool is None:
        raise HTTPException(404, state.registry.missing(body.tool_name, body.version))
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
    )
    arguments = with_defaults(descriptor.parameters, body.arguments)
    result = ToolResult(
        call_id=call.id,
        tool_name=descriptor.name,
        tool_version=descriptor.version,
        status=ToolStatus.QUEUED,
        metadata={"queued_at": time.time(), "execution_time_ms": None},
    )
    try:
        warning = tool.confirmation(arguments, state.context)
    except SandboxViolation as exc:
        result.status, result.error = ToolStatus.BLOCKED, str(exc)
        return await _record_final(state, result)
    if warning is not None and not state.settings.auto_approve:
        result.status, result.error = ToolStatus.AWAITING_APPROVAL, warning
        return await _record_final(state, result)
    if not await state.store.create(result):
        raise HTTPException(409, f"a call with id {call.id!r} already exists")
    publish = functools.partial(
        enqueue,
        state.celery,
        call,
        level=descriptor.permission,
        tool_limit_s=tool.time_limit_s(arguments, state.settings),
        kill_grace_s=state.settings.kill_grace_s,
        approved=warning is not None,
        queued_at=result.metadata["queued_at"],
    )
    try:
        await asyncio.get_running_loop().run_in_executor(state.publisher, publish)
    except Exception:
        await state.store.forget(call.id)  # not queued after all: no record, id reusable
        raise
    if wait:
        finished = await state.store.wait_final(call.id, wait)
        if finished is not None:  # already JSON: passed through without a parse
            return Response(finished, media_type="application/json")
        result = await state.store.get(call.id) or result
    return _respond(result)


@router.get(
    "/{call_id}", response_model=ToolResult, responses={404: {"description": "No such call"}}
)
async def get_call(call_id: CallId, state: State) -> JSONResponse:
    """A call's current state, or its result once it has ended."""
    result = await state.store.get(call_id)
    if result is None:
        raise HTTPException(404, f"no call with id {call_id!r}")
    return _respond(result)


async def _record_final(state: ApiState, result: ToolResult) -> JSONResponse:
    """A call the API stops itself (blocked, awaiting approval): stored, not enqueued."""
    if not await state.store.create(result):
        raise HTTPException(409, f"a call with id {result.call_id!r} already exists")
    return _respond(result)


def _respond(result: ToolResult) -> JSONResponse:
    code = 200 if result.final else 202
    return JSONResponse(result.model_dump(mode="json"), status_code=code)

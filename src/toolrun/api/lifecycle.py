"""The API's side of the call lifecycle: admission off the event loop, on a few
long-lived threads of its own, unless the call is the only one being answered, and the
answer it gives."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from typing import TypeVar

from fastapi.responses import JSONResponse

from toolrun.api.state import ApiState
from toolrun.tools.model import ToolResult

T = TypeVar("T")


async def admitted(state: ApiState, step: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run an admission step of a POST /v1/calls request on the admission threads (its
    Redis round trips block), with this request's context (the call id on every line it
    logs). When that request is the only one being answered, the step runs on the event
    loop itself: no other call waits for the loop meanwhile, and the two hand-offs
    between threads, a tenth of the API's part of a call at one client, are saved
    (bench/README.md)."""
    if state.calls_in_flight <= 1:
        return step(*args, **kwargs)
    context = contextvars.copy_context()
    bound = functools.partial(context.run, step, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(state.admission, bound)


def respond(result: ToolResult) -> JSONResponse:
    """200 for a call that has ended, 202 for one still queued, running or awaiting approval."""
    code = 200 if result.final else 202
    return JSONResponse(result.model_dump(mode="json"), status_code=code)

"""The API's side of the call lifecycle: admission in one hop off the event loop, on a
few long-lived threads of its own, and the answer it gives."""

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
    """Run an admission step on the admission threads (its Redis round trips block), with
    this request's context (the call id on every line it logs)."""
    context = contextvars.copy_context()
    bound = functools.partial(context.run, step, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(state.admission, bound)


def respond(result: ToolResult) -> JSONResponse:
    """200 for a call that has ended, 202 for one still queued, running or awaiting approval."""
    code = 200 if result.final else 202
    return JSONResponse(result.model_dump(mode="json"), status_code=code)

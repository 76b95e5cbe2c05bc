"""Publishing a call on the queue of its tool's permission level, with its time limits."""

from __future__ import annotations

import math
from typing import Any

from celery import Celery

from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall

# The tool's own limit fires first (the sandbox kills the process group), then Celery's
# soft limit (an exception in the task), then the hard limit (the pool child is killed).
EXECUTE_TASK = "toolrun.execute"
SOFT_LIMIT_MARGIN_S = 2.0
HARD_LIMIT_MARGIN_S = 5.0


def time_limits(tool_limit_s: float) -> tuple[int, int]:
    """(soft, hard) Celery limits, whole seconds, for a tool that may run `tool_limit_s`."""
    soft = math.ceil(tool_limit_s + SOFT_LIMIT_MARGIN_S)
    return soft, max(soft + 1, math.ceil(tool_limit_s + HARD_LIMIT_MARGIN_S))


def enqueue(
    app: Celery,
    call: ToolCall,
    *,
    level: PermissionLevel,
    tool_limit_s: float,
    approved: bool,
    queued_at: float,
) -> None:
    """Send `call` to the workers of `level`; the Celery task id is the call id."""
    soft, hard = time_limits(tool_limit_s)
    payload: dict[str, Any] = call.model_dump(mode="json")
    app.send_task(
        EXECUTE_TASK,
        args=[payload, approved, queued_at],
        task_id=call.id,
        queue=level.queue_name,
        soft_time_limit=soft,
        time_limit=hard,
        shadow=f"toolrun.{call.tool_name}",
    )

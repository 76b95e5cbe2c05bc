"""Publishing a call on the queue of its tool's permission level, with its time limits."""

from __future__ import annotations

import math
from typing import Any

from celery import Celery

from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall

EXECUTE_TASK = "toolrun.execute"
# The tool's own limit fires first and the sandbox kills its processes: SIGTERM, a grace,
# SIGKILL, then a sweep with another grace and up to 2 s for the cgroup to empty. Celery's
# soft limit (an exception in the task) must wait for all of that, the hard limit (the
# pool child is killed) comes last.
CLEANUP_SLACK_S = 4.0
HARD_AFTER_SOFT_S = 3.0


def time_limits(tool_limit_s: float, kill_grace_s: float = 1.0) -> tuple[int, int]:
    """(soft, hard) Celery limits, whole seconds, for a tool that may run `tool_limit_s`."""
    soft = math.ceil(tool_limit_s + 3 * kill_grace_s + CLEANUP_SLACK_S)
    return soft, math.ceil(soft + HARD_AFTER_SOFT_S)


def enqueue(
    app: Celery,
    call: ToolCall,
    *,
    level: PermissionLevel,
    tool_limit_s: float,
    kill_grace_s: float,
    approved_by: str | None,
    queued_at: float,
) -> None:
    """Send `call` to the workers of `level`; the Celery task id is the call id.

    `approved_by`: who approved a call that needed it (an operator, a rule); None for a safe
    call, which the worker refuses should it need approval by the time it runs.
    """
    soft, hard = time_limits(tool_limit_s, kill_grace_s)
    payload: dict[str, Any] = call.model_dump(mode="json")
    app.send_task(
        EXECUTE_TASK,
        args=[payload, approved_by, queued_at],
        task_id=call.id,
        queue=level.queue_name,
        soft_time_limit=soft,
        time_limit=hard,
        shadow=f"toolrun.{call.tool_name}",
    )

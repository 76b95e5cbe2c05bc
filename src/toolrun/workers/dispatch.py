"""Publishing a call on its tool's queue, with its time limits."""

from __future__ import annotations

import json
import math
from typing import Any

from celery import Celery
from kombu import Exchange, Queue

from toolrun.history.records import redact
from toolrun.tools.model import ToolCall

EXECUTE_TASK = "toolrun.execute"
# The tool's own limit fires first and the sandbox kills its processes: SIGTERM, a grace,
# SIGKILL, then a sweep with another grace and up to 2 s for the cgroup to empty. Celery's
# soft limit (an exception in the task) must wait for all of that, the hard limit (the
# pool child is killed) comes last.
CLEANUP_SLACK_S = 4.0
HARD_AFTER_SOFT_S = 3.0
# Flower shows these in its task list and page; Celery's own default cap is 1024.
MAX_REPR_CHARS = 1024


def time_limits(tool_limit_s: float, kill_grace_s: float = 1.0) -> tuple[int, int]:
    """(soft, hard) Celery limits, whole seconds, for a tool that may run `tool_limit_s`."""
    soft = math.ceil(tool_limit_s + 3 * kill_grace_s + CLEANUP_SLACK_S)
    return soft, math.ceil(soft + HARD_AFTER_SOFT_S)


def shown_arguments(call: ToolCall, parameters: dict[str, Any] | None) -> str:
    """The call's arguments as Flower (and Celery's log lines) show them: JSON, secret
    (``writeOnly``) values redacted, at most MAX_REPR_CHARS long."""
    return _truncated(json.dumps(redact(call.arguments, parameters), default=str))


def _truncated(text: str) -> str:
    if len(text) <= MAX_REPR_CHARS:
        return text
    return text[: MAX_REPR_CHARS - 1] + "…"


def enqueue(
    app: Celery,
    call: ToolCall,
    *,
    queue: str,
    parameters: dict[str, Any] | None,
    tool_limit_s: float,
    kill_grace_s: float,
    approved_by: str | None,
    queued_at: float,
) -> None:
    """Send `call` to the workers of `queue` (`Tool.queue`); the Celery task id is
    the call id.

    `parameters`: the tool's JSON Schema, which marks the arguments never to be shown.
    `approved_by`: who approved a call that needed it (an operator, a rule); None for a safe
    call, which the worker refuses should it need approval by the time it runs.
    """
    soft, hard = time_limits(tool_limit_s, kill_grace_s)
    target: str | Queue = queue
    declare = []
    if queue not in app.amqp.queues:  # a machine's queue (`Tool.machine`): declared here,
        # so the message waits in it even before that machine's worker has declared it
        target = Queue(queue, Exchange(queue, "direct"), queue)
        declare.append(target)
    payload: dict[str, Any] = call.model_dump(mode="json")
    about = {"version": call.version, "agent_id": call.agent_id, "approved_by": approved_by}
    app.send_task(
        EXECUTE_TASK,
        args=[payload, approved_by, queued_at],
        task_id=call.id,
        queue=target,  # type: ignore[arg-type]  # Celery takes a Queue too (not in its stubs)
        declare=declare,
        soft_time_limit=soft,
        time_limit=hard,
        shadow=f"toolrun.{call.tool_name}",
        # Shown instead of the raw task arguments, which hold the secrets in the payload.
        argsrepr=shown_arguments(call, parameters),
        kwargsrepr=_truncated(json.dumps(about)),
    )

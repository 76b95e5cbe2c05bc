"""Envelopes made by hand, for tests that send or run a call without the lifecycle."""

from __future__ import annotations

import functools
import time
from typing import Any

import redis

from toolrun.calls.envelope import Envelope
from toolrun.calls.fairness import FairQueues
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Policy, Risk
from toolrun.tools.model import ToolCall
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import with_defaults
from toolrun.workers.app import create_celery_app
from toolrun.workers.dispatch import FairPublisher
from toolrun.workers.messages import Messages


def envelope(
    call: ToolCall,
    *,
    level: PermissionLevel = PermissionLevel.READ_ONLY,
    queue: str | None = None,
    approved_by: str | None = None,
    arguments: dict[str, Any] | None = None,
    time_limit_s: float = 5.0,
) -> Envelope:
    """`call` as admitted at `level` (on its queue unless `queue`), safe, queued now; its
    version, when it names none, and its arguments' defaults (unless `arguments`) those of
    the built-in tool of that name."""
    if call.version is None:
        tool = _builtins().get(call.tool_name)
        call = call.model_copy(update={"version": tool.descriptor.version if tool else "1.0.0"})
    return Envelope(
        call=call,
        arguments=_with_defaults(call) if arguments is None else arguments,
        queue=level.queue_name if queue is None else queue,
        policy=Policy.SAFE,
        risk=Risk.LOW,
        warning="",
        approved_by=approved_by,
        queued_at=time.time(),
        time_limit_s=time_limit_s,
    )


def put_on_broker(redis_url: str, sent: Envelope, parameters: dict[str, Any] | None = None) -> None:
    """Put `sent`'s message (and its task-sent event) on its queue as toolrun's publisher
    builds it, with no admission, no record and no turn (`workers.messages`)."""
    app = create_celery_app(Settings(redis_url=redis_url))
    client = redis.Redis.from_url(redis_url)
    try:
        queues = FairQueues(client, ahead=0, batch_every=4)
        publisher = FairPublisher(Messages(app), queues, kill_grace_s=0.5)
        publisher.delivery(sent, parameters).push(client)
    finally:
        client.close()
        app.close()


@functools.cache
def _builtins() -> ToolRegistry:
    return ToolRegistry.with_builtins()


def _with_defaults(call: ToolCall) -> dict[str, Any]:
    tool = _builtins().get(call.tool_name, call.version)
    return (
        call.arguments
        if tool is None
        else with_defaults(tool.descriptor.parameters, call.arguments)
    )

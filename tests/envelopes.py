"""Envelopes made by hand, for tests that send or run a call without the lifecycle."""

from __future__ import annotations

import time
from typing import Any

from toolrun.calls.envelope import Envelope
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Policy, Risk
from toolrun.tools.model import ToolCall


def envelope(
    call: ToolCall,
    *,
    level: PermissionLevel = PermissionLevel.READ_ONLY,
    queue: str | None = None,
    approved_by: str | None = None,
    arguments: dict[str, Any] | None = None,
    time_limit_s: float = 5.0,
) -> Envelope:
    """`call` as admitted at `level` (on its queue unless `queue`), safe, queued now."""
    return Envelope(
        call=call,
        arguments=call.arguments if arguments is None else arguments,
        level=level,
        queue=level.queue_name if queue is None else queue,
        policy=Policy.SAFE,
        risk=Risk.LOW,
        warning="",
        approved_by=approved_by,
        queued_at=time.time(),
        time_limit_s=time_limit_s,
    )

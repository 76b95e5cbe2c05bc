"""The workers' after-call hook: count the ended call, warn when it ran slowly."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import redis

from toolrun.monitoring.metrics import record_call
from toolrun.tools.model import ToolCall, ToolResult

log = logging.getLogger(__name__)


@dataclass
class CallMonitor:
    """Called once per call a worker ended, after its final state is stored."""

    redis: redis.Redis
    slow_call_ms: float

    def __call__(self, call: ToolCall, result: ToolResult) -> None:
        elapsed_ms = result.metadata.get("execution_time_ms")
        seconds = None if elapsed_ms is None else elapsed_ms / 1000
        record_call(self.redis, result.tool_name, result.status, seconds)
        if elapsed_ms is not None and elapsed_ms > self.slow_call_ms:
            log.warning(
                "slow call",
                extra={
                    "call_id": result.call_id,
                    "tool": result.tool_name,
                    "execution_time_ms": elapsed_ms,
                    "agent_id": call.agent_id,
                },
            )

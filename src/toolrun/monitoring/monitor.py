"""What every call's ending (`calls.endings`) is told for monitoring: it is counted, in the
round trip that stores its final state, and a slow one gets a warning."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from toolrun.calls.endings import CallEnded
from toolrun.calls.store import Increment
from toolrun.monitoring.metrics import call_increments

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallMonitor:
    """Counts ended calls (`count`) and warns of slow ones (a subscriber)."""

    slow_call_ms: float

    def count(self, event: CallEnded) -> list[Increment]:
        """The call's counters and execution time."""
        result = event.result
        elapsed_ms = result.metadata.get("execution_time_ms")
        seconds = None if elapsed_ms is None else elapsed_ms / 1000
        return call_increments(result.tool_name, result.status, seconds)

    def __call__(self, event: CallEnded) -> None:
        result = event.result
        elapsed_ms = result.metadata.get("execution_time_ms")
        if elapsed_ms is not None and elapsed_ms > self.slow_call_ms:
            log.warning(
                "slow call",
                extra={
                    "call_id": result.call_id,
                    "tool": result.tool_name,
                    "execution_time_ms": elapsed_ms,
                    "agent_id": result.metadata.get("agent_id"),
                },
            )

"""What every call's ending (`calls.endings`) is told for monitoring: it is counted (with
its execution time, and how long it waited for a worker when one started it), in the round
trip that stores its final state, and a slow one gets a warning."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from toolrun.calls.endings import CallEnded
from toolrun.calls.store import Increment
from toolrun.monitoring.metrics import call_increments, wait_increments

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallMonitor:
    """Counts ended calls (`count`) and warns of slow ones (a subscriber)."""

    slow_call_ms: float

    def count(self, event: CallEnded) -> list[Increment]:
        """The call's counters, execution time and time in its queue."""
        meta = event.result.metadata
        elapsed_ms = meta.get("execution_time_ms")
        seconds = None if elapsed_ms is None else elapsed_ms / 1000
        added = call_increments(event.result.tool_name, event.result.status, seconds)
        # A worker says who it is as "<level or delegation>@<host>" (`workers.runtime`).
        worker, wait_ms = meta.get("worker"), meta.get("queue_wait_ms")
        if isinstance(worker, str) and isinstance(wait_ms, int | float):
            added += wait_increments(worker.partition("@")[0], max(0.0, wait_ms / 1000))
        return added

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

"""Call counters shared by every API and worker process: Redis hashes, one round trip per
ended call.

Layout (the only place it is spelled):

- ``toolrun:metrics:calls``: field ``<status>:<tool>`` → calls of that tool that ended with
  that status
- ``toolrun:metrics:duration``: field ``<le>:<tool>`` → executions that fell in that bucket
  (not cumulative: the reader adds them up), ``sum:<tool>`` → seconds in total
- ``toolrun:metrics:wait``: field ``<le>:<level>``, ``sum:<level>``, the same for the time
  calls waited in their queue before a worker of that level (or ``delegation``) started them

Statuses and bucket bounds never contain ``:``, so a field splits at its first one whatever
the tool is called. They are added with the call's final state (`calls.endings`).
"""

from __future__ import annotations

from bisect import bisect_left

from toolrun.calls.store import Increment
from toolrun.tools.model import ToolStatus

PREFIX = "toolrun:metrics:"
CALLS = f"{PREFIX}calls"
DURATION = f"{PREFIX}duration"
WAIT = f"{PREFIX}wait"
SUM = "sum"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# As Prometheus spells them: 1 → "1.0" (repr of the float), the last "+Inf".
BUCKET_LABELS = (*(repr(float(bound)) for bound in BUCKETS), "+Inf")


def bucket_of(seconds: float) -> str:
    """The label (``le``) of the smallest bucket holding `seconds`."""
    return BUCKET_LABELS[bisect_left(BUCKETS, seconds)]


def call_increments(tool: str, status: ToolStatus, seconds: float | None) -> list[Increment]:
    """What one ended call adds: its count, and its execution time when it ran (`seconds`)."""
    added: list[Increment] = [(CALLS, f"{status.value}:{tool}", 1)]
    if seconds is not None:
        added += observed(DURATION, tool, seconds)
    return added


def wait_increments(level: str, seconds: float) -> list[Increment]:
    """What one call started by a worker of `level` adds: the time it waited in its queue."""
    return observed(WAIT, level, seconds)


def observed(histogram: str, label: str, seconds: float) -> list[Increment]:
    """One observation of `seconds` in the `histogram` hash's series for `label`."""
    return [
        (histogram, f"{bucket_of(seconds)}:{label}", 1),
        (histogram, f"{SUM}:{label}", seconds),
    ]

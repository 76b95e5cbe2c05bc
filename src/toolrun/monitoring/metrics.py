"""Call counters shared by every API and worker process: Redis hashes, one round trip per
ended call.

Layout (the only place it is spelled):

- ``toolrun:metrics:calls``: field ``<status>:<tool>`` → calls of that tool that ended with
  that status
- ``toolrun:metrics:duration``: field ``<le>:<tool>`` → executions that fell in that bucket
  (not cumulative: the reader adds them up), ``sum:<tool>`` → seconds in total

Statuses and bucket bounds never contain ``:``, so a field splits at its first one whatever
the tool is called. A metrics failure is logged and swallowed: it must never fail a call.
"""

from __future__ import annotations

import logging
from bisect import bisect_left

import redis

from toolrun.tools.model import ToolStatus

PREFIX = "toolrun:metrics:"
CALLS = f"{PREFIX}calls"
DURATION = f"{PREFIX}duration"
SUM = "sum"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# As Prometheus spells them: 1 → "1.0" (repr of the float), the last "+Inf".
BUCKET_LABELS = (*(repr(float(bound)) for bound in BUCKETS), "+Inf")
log = logging.getLogger(__name__)

Pipeline = redis.client.Pipeline


def bucket_of(seconds: float) -> str:
    """The label (``le``) of the smallest bucket holding `seconds`."""
    return BUCKET_LABELS[bisect_left(BUCKETS, seconds)]


def record_call(client: redis.Redis, tool: str, status: ToolStatus, seconds: float | None) -> None:
    """Count one ended call, and its execution time when it ran (`seconds`)."""
    try:
        pipe = client.pipeline(transaction=False)
        queue_call(pipe, tool, status, seconds)
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("call metrics not recorded (%s: %s)", type(exc).__name__, exc)


def queue_call(pipe: Pipeline, tool: str, status: ToolStatus, seconds: float | None) -> None:
    """Queue `record_call`'s counting on `pipe` (sent with whatever else it holds)."""
    pipe.hincrby(CALLS, f"{status.value}:{tool}", 1)
    if seconds is not None:
        pipe.hincrby(DURATION, f"{bucket_of(seconds)}:{tool}", 1)
        pipe.hincrbyfloat(DURATION, f"{SUM}:{tool}", seconds)

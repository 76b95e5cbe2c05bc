"""The one way a call ends: its final state stored, with its counters in the same Redis
pipeline (a call refused before it was sent: created, then counted in a second trip, since
only a created record may count), then a `CallEnded` event for every subscriber (history
row, slow-call warning).
Blocked, denied, expired, cancelled, finished or lost: each ending goes through here, so
each is recorded alike.

The scheduler's wake-up is not a subscriber: it is pushed in the same Redis pipeline as
the final state (`CallStore.finish`), so a run can never miss the end of its call.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from toolrun.calls.store import CallStore
from toolrun.history.records import CallRecord, record_of
from toolrun.tools.model import ToolResult

log = logging.getLogger(__name__)
STORE_RETRY_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 4.0)  # a Redis restart of a few seconds


@dataclass(frozen=True)
class CallEnded:
    """A call whose final state is stored; `parameters` is its tool's schema (which marks
    the arguments never to be written anywhere), None when the tool is unknown."""

    result: ToolResult
    arguments: dict[str, Any]
    parameters: dict[str, Any] | None


Subscriber = Callable[[CallEnded], None]
# Queues commands on the Redis pipeline that stores the final state (the call's counters).
Counter = Callable[[Any, CallEnded], None]


def history_rows(sink: Callable[[Callable[[], CallRecord]], None]) -> Subscriber:
    """A subscriber handing `sink` a function that makes the ended call's history row: a
    batching writer makes it on its own thread (`HistoryWriter.put_later`), a store at
    once (`written_by`)."""

    def write(event: CallEnded) -> None:
        sink(functools.partial(record_of, event.result, event.arguments, event.parameters))

    return write


def written_by(write: Callable[[CallRecord], None]) -> Callable[[Callable[[], CallRecord]], None]:
    """A `history_rows` sink writing each row at once with `write` (a store's)."""
    return lambda make: write(make())


@dataclass
class Endings:
    """Stores final states and tells the subscribers; a subscriber's failure is logged,
    never raised (the call has ended whatever they do)."""

    store: CallStore
    subscribers: Sequence[Subscriber]
    counters: Sequence[Counter] = ()
    retry_delays_s: Sequence[float] = ()  # between attempts to store a final state

    def finish(
        self, result: ToolResult, arguments: dict[str, Any], parameters: dict[str, Any] | None
    ) -> None:
        """End a call that has a record: store its final state (retrying after each of
        `retry_delays_s`), hand it to its waiters, then notify.

        Raises:
            redis.RedisError: Redis still unreachable after the retries.
        """
        event = CallEnded(result, arguments, parameters)
        also = functools.partial(self._count, event=event)
        for delay in self.retry_delays_s:
            try:
                self.store.finish(result, also)
            except redis.RedisError as exc:
                log.warning("storing the result of %s failed (%s); retrying", result.call_id, exc)
                time.sleep(delay)
            else:
                break
        else:
            self.store.finish(result, also)
        self.notify(event)

    def at_once(
        self, result: ToolResult, arguments: dict[str, Any], parameters: dict[str, Any] | None
    ) -> bool:
        """End a call before anything was sent (blocked, stranded): its record is created
        final; False, with nothing written, when a record with its id exists."""
        if not self.store.create(result):
            return False
        event = CallEnded(result, arguments, parameters)
        try:
            pipe = self.store.client.pipeline(transaction=False)
            self._count(pipe, event)
            pipe.execute()
        except redis.RedisError as exc:  # counters are not worth failing the call for
            log.warning("call metrics not recorded (%s: %s)", type(exc).__name__, exc)
        self.notify(event)
        return True

    def _count(self, pipe: Any, event: CallEnded) -> None:
        for counter in self.counters:
            counter(pipe, event)

    def notify(self, event: CallEnded) -> None:
        for subscriber in self.subscribers:
            try:
                subscriber(event)
            except Exception as exc:  # a history or metrics outage must not undo the ending
                log.warning(
                    "after-call step failed for %s: %r",
                    event.result.call_id,
                    exc,
                    extra={"call_id": event.result.call_id},
                )

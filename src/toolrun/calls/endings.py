"""The one way a call ends: its final state stored, with its counters, in one atomic Redis
round trip (a call refused before it was sent: created, then counted in a second trip,
since only a created record may count), then a `CallEnded` event for every subscriber
(history row, slow-call warning). The first ending wins: a later one (a worker back after
its call was settled as lost) stores, counts and tells nothing.

Where calls end back to back (workers), the history row is not a subscriber's: its makings
go into the Redis outbox in the same round trip as the final state (`outbox=True`), so
the row is as durable as the result before the call's message is acknowledged, and the
workers' drainers write it (`calls.outbox`).
Blocked, denied, expired, cancelled, finished or lost: each ending goes through here, so
each is recorded alike.

The scheduler's wake-up is not a subscriber: it is pushed in the same round trip as the
final state (`CallStore.finish`), so a run can never miss the end of its call.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from toolrun.calls.fairness import Step
from toolrun.calls.store import Broadcast, CallStore, Finished, Increment, add_increments
from toolrun.history.records import CallRecord, record_of, redact
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
# What to add to the counters when a call ends (stored with its final state).
Counter = Callable[[CallEnded], Iterable[Increment]]


def history_rows(write: Callable[[CallRecord], None]) -> Subscriber:
    """A subscriber writing each ended call's history row at once with `write` (a store's)."""

    def written(event: CallEnded) -> None:
        write(record_of(event.result, event.arguments, event.parameters))

    return written


@dataclass
class Endings:
    """Stores final states and tells the subscribers; a subscriber's failure is logged,
    never raised (the call has ended whatever they do)."""

    store: CallStore
    subscribers: Sequence[Subscriber]
    counters: Sequence[Counter] = ()
    retry_delays_s: Sequence[float] = ()  # between attempts to store a final state
    outbox: bool = False  # history rows go with the final state, to the outbox

    def finish(
        self,
        result: ToolResult,
        arguments: dict[str, Any],
        parameters: dict[str, Any] | None,
        *,
        unless_started: bool = False,
        pump: Step | None = None,
        broadcast: Broadcast | None = None,
    ) -> Finished:
        """End a call that has a record: store its final state (retrying after each of
        `retry_delays_s`), hand it to its waiters, then notify. Not `stored`, with nothing
        stored, counted or told, when the call had already ended (or, `unless_started`,
        had started: a cancel). `pump`: the queue whose slot the ending frees, pumped in
        the same round trip, which also publishes `broadcast` (`CallStore.finish`).

        Raises:
            redis.RedisError: Redis still unreachable after the retries.
        """
        event = CallEnded(result, arguments, parameters)
        increments = self._increments(event)
        row = self._row(arguments, parameters)

        def store() -> Finished:
            return self.store.finish(
                result,
                increments,
                arguments=row,
                unless_started=unless_started,
                pump=pump,
                broadcast=broadcast,
            )

        failed = False
        for delay in self.retry_delays_s:
            try:
                finished = store()
            except redis.RedisError as exc:
                log.warning("storing the result of %s failed (%s); retrying", result.call_id, exc)
                failed = True
                time.sleep(delay)
            else:
                break
        else:
            finished = store()
        if not finished.stored and failed:  # an attempt whose answer was lost may have stored it
            stored = self.store.get(result.call_id) == result
            finished = Finished(stored, finished.handed_out)
        if not finished.stored:
            log.warning(
                "call %s had already ended; this ending (%s) is dropped",
                result.call_id,
                result.status.value,
            )
            return finished
        self.notify(event)
        return finished

    def at_once(
        self,
        result: ToolResult,
        arguments: dict[str, Any],
        parameters: dict[str, Any] | None,
        *,
        request: str,
    ) -> bool:
        """End a call before anything was sent (blocked, stranded): its record is created
        final (`request`: its digest, see `CallStore.create`); False, with nothing
        written, when a record with its id exists."""
        row = self._row(arguments, parameters)
        if not self.store.create(result, request=request, arguments=row):
            return False
        event = CallEnded(result, arguments, parameters)
        try:
            add_increments(self.store.client, self._increments(event))
        except redis.RedisError as exc:  # counters are not worth failing the call for
            log.warning("call metrics not recorded (%s: %s)", type(exc).__name__, exc)
        self.notify(event)
        return True

    def _row(self, arguments: dict[str, Any], parameters: dict[str, Any] | None) -> str | None:
        """The history row's arguments for the outbox (secrets redacted), None without it."""
        if not self.outbox:
            return None
        return json.dumps(redact(arguments, parameters), default=str)

    def _increments(self, event: CallEnded) -> list[Increment]:
        return [increment for counter in self.counters for increment in counter(event)]

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

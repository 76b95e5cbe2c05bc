"""Celery's task events, which Flower reads, built by toolrun and published in the round
trips it makes anyway.

Celery's own worker sends each task event from its main process: a publish of its own,
with a new Redis client, per event — about a third of that process's CPU per call on the
round-trip bench (bench/README.md). toolrun's workers send them instead with the state
changes they stand for: task-received and task-started with the call's running state,
task-succeeded or task-failed with its ending (`calls.store`, `workers.runtime`); the
admission sends task-sent with the message (`workers.messages`); a message taken for a
call that had already ended sends only how it ended (task-revoked for a cancelled
call). So Celery's worker task events are off (`workers.app`); its worker heartbeats are
not. Each event has the fields Celery's own has (`celery.worker.request`,
`celery.worker.strategy`), which `tests/integration/test_task_events.py` checks against a
Celery worker's. They go when the app's `task_send_sent_event` is on, as task-sent does.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import redis
from celery import Celery
from celery.utils.nodenames import anon_nodename
from celery.utils.time import utcoffset

from toolrun.calls.store import Broadcast
from toolrun.tools.model import ToolResult, ToolStatus
from toolrun.workers.wire import EVENTS_EXCHANGE, events_channel, stored_message

log = logging.getLogger(__name__)


class ToolCallFailed(Exception):
    """Raised once a call's failure is stored, so that Celery — and Flower, which
    operators watch — count its task as failed. An expected exception of the task
    (`throws`): acknowledged like any ending, never retried, logged at info level."""


def task_failure(result: ToolResult) -> ToolCallFailed | None:
    """What the execute task raises for a call that ended as `result`; None: it returns
    the call's status."""
    if result.ok:
        return None
    return ToolCallFailed(f"{result.status}: {result.error or '(no message)'}")


class TaskEvents:
    """Builds an app's task events as kombu's Redis transport publishes them; every
    method returns None when the app's events are off."""

    def __init__(self, app: Celery) -> None:
        self.enabled = bool(app.conf.task_send_sent_event)
        self._channel_prefix = events_channel(str(app.conf.broker_url), "")
        self._clock: Any = app.clock  # type: ignore[attr-defined]  # not in celery-types
        self._anonymous = anon_nodename()

    def event(self, kind: str, sender: str | None, **fields: Any) -> Broadcast | None:
        """An event of `kind` (task-sent...) from node `sender` (None: this process,
        unnamed, as a client is), with Celery's own fields around `fields`."""
        if not self.enabled:
            return None
        hostname = sender or self._anonymous
        body = {
            "hostname": hostname,
            "utcoffset": utcoffset(),
            "pid": os.getpid(),
            "clock": self._clock.forward(),
            **fields,
            "timestamp": time.time(),
            "type": kind,
        }
        routing_key = kind.replace("-", ".")
        properties = {
            "delivery_mode": 1,
            "delivery_info": {"exchange": EVENTS_EXCHANGE, "routing_key": routing_key},
        }
        message = stored_message(json.dumps(body), {"hostname": hostname}, properties)
        return Broadcast(self._channel_prefix + routing_key, message)

    def received(self, task_name: str, request: Any) -> Broadcast | None:
        """task-received of the task `task_name` whose request (its `Task.request`, in a
        pool process) is `request`, with the fields Celery's worker gives it as it takes
        the message."""
        return self.event(
            "task-received",
            request.hostname,
            uuid=request.id,
            name=request.shadow or task_name,
            args=getattr(request, "argsrepr", None),
            kwargs=getattr(request, "kwargsrepr", None),
            root_id=request.root_id,
            parent_id=request.parent_id,
            retries=request.retries,
            eta=request.eta,  # as the message's headers have them: ISO 8601, or None
            expires=request.expires,
        )

    def delivery(
        self, call_id: str, worker: str | None, received: Broadcast | None = None
    ) -> DeliveryEvents:
        """The events of one delivery of a call to the worker node `worker`; `received`:
        its task-received, sent with its task-started."""
        return DeliveryEvents(self, call_id, worker, received)


@dataclass
class DeliveryEvents:
    """The events of one delivery of a call, from its start. `start_published`: whether
    its task-received and task-started went out (with the call's running state); a task
    that ends before then sends them with its outcome."""

    events: TaskEvents
    call_id: str
    worker: str | None
    received: Broadcast | None = None
    since: float = field(default_factory=time.monotonic)
    start_published: bool = False

    def started(self) -> list[Broadcast]:
        """task-received (when known) and task-started, in that order."""
        started = self.events.event("task-started", self.worker, uuid=self.call_id)
        return [event for event in (self.received, started) if event is not None]

    def ended(self, result: ToolResult) -> Broadcast | None:
        """The task's outcome when its call ended as `result` (see `task_failure`)."""
        failure = task_failure(result)
        if failure is None:
            return self.returned(result.status.value)
        return self.failed(failure)

    def failed(self, error: BaseException) -> Broadcast | None:
        """task-failed: the task raised `error`."""
        shown = "".join(traceback.format_exception(error)) if error.__traceback__ else ""
        return self.events.event(
            "task-failed",
            self.worker,
            uuid=self.call_id,
            exception=repr(error),
            traceback=shown or f"{type(error).__name__}: {error}",
        )

    def settled(self, record: ToolResult) -> Broadcast | None:
        """The final event of a task whose call had ended as `record` before this
        delivery (a redelivery, or the message of a call cancelled while queued):
        task-revoked for a cancelled call, as Celery's worker sends for a revoked task;
        else the ending's own (sent again if its worker sent it before it was lost);
        nothing for a call not ended (back to awaiting approval: a new message follows)."""
        if record.status is ToolStatus.CANCELLED:
            return self.events.event(
                "task-revoked",
                self.worker,
                uuid=self.call_id,
                terminated=False,
                signum=None,
                expired=False,
            )
        return self.ended(record) if record.final else None

    def returned(self, value: str) -> Broadcast | None:
        """task-succeeded: the task returned `value` (a status, or why nothing ran)."""
        return self.events.event(
            "task-succeeded",
            self.worker,
            uuid=self.call_id,
            result=repr(value),
            runtime=time.monotonic() - self.since,
        )


def publish(client: redis.Redis, call_id: str, broadcasts: Iterable[Broadcast | None]) -> None:
    """Publish the events of call `call_id` that no state change carries (None: an event
    that is off), in one round trip. A Redis that fails is logged, not raised: Flower
    then shows the task as it last heard of it."""
    sent = [broadcast for broadcast in broadcasts if broadcast is not None]
    if not sent:
        return
    pipe = client.pipeline(transaction=False)
    for broadcast in sent:
        pipe.publish(broadcast.channel, broadcast.message)
    try:
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("the events of %s not sent (%s)", call_id, exc)

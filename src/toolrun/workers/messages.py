"""A call's Celery task message and its task-sent event, as Redis holds them.

Celery's task message (protocol 2) wrapped as kombu's Redis transport stores it: a JSON
object LPUSHed on the queue's list, its body base64-encoded (`workers.wire`). The
task-sent event (which Flower reads) is published on the events' channel
(`workers.task_events`). Built here, at admission, they are put on the broker by the Lua
script that hands the call to its workers (`calls.fairness`), in that script's round
trip: no publish of its own, no second trip, no Redis client per publish.
`tests/integration/test_task_messages.py` compares them with what Celery's own
`send_task` writes, so a change of either format fails there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import redis
from celery import Celery
from celery.utils.nodenames import anon_nodename

from toolrun.calls.envelope import Envelope
from toolrun.calls.store import Broadcast
from toolrun.workers.task_events import TaskEvents
from toolrun.workers.wire import stored_message

EXECUTE_TASK = "toolrun.execute"
# The task's arguments are the envelope alone: [args, kwargs, embed] after it.
_BODY_TAIL = '], {}, {"callbacks": null, "errbacks": null, "chain": null, "chord": null}]'


@dataclass(frozen=True)
class Delivery:
    """What puts one call on the broker: its message for `queue`'s list and, unless
    events are off (then `event` is None), its task-sent event."""

    queue: str
    message: str
    event: Broadcast | None

    def encoded(self) -> str:
        """As the fair queues' scripts read it (`fairness.LUA_DELIVER`)."""
        fields = {"queue": self.queue, "message": self.message}
        if self.event is not None:
            fields |= {"channel": self.event.channel, "event": self.event.message}
        return json.dumps(fields)

    def push(self, client: redis.Redis) -> None:
        """Put it on the broker from Python, in one round trip (a call sent again)."""
        pipe = client.pipeline(transaction=False)
        pipe.lpush(self.queue, self.message)
        if self.event is not None:
            pipe.publish(self.event.channel, self.event.message)
        pipe.execute()


@dataclass(frozen=True)
class TaskOptions:
    """What Celery would take as `send_task`'s options: limits, and what Flower shows."""

    soft_time_limit: int
    time_limit: int
    shadow: str  # the task's name as shown: toolrun.<tool>
    argsrepr: str  # shown instead of the arguments, which hold secrets
    kwargsrepr: str


class Messages:
    """Builds the deliveries of an app's calls (see the module)."""

    def __init__(self, app: Celery) -> None:
        self.app = app
        self.origin = anon_nodename()
        self.reply_to = app.thread_oid
        self.events = TaskEvents(app)

    def delivery(self, envelope: Envelope, options: TaskOptions, encoded: str) -> Delivery:
        """`envelope`'s delivery; `encoded`: the envelope as JSON (its task argument)."""
        call_id = envelope.call.id
        queue = envelope.queue
        headers: dict[str, Any] = {
            "lang": "py",
            "task": EXECUTE_TASK,
            "id": call_id,
            "shadow": options.shadow,
            "eta": None,
            "expires": None,
            "group": None,
            "group_index": None,
            "retries": 0,
            "timelimit": [options.time_limit, options.soft_time_limit],
            "root_id": call_id,
            "parent_id": None,
            "argsrepr": options.argsrepr,
            "kwargsrepr": options.kwargsrepr,
            "origin": self.origin,
            "ignore_result": None,
            "replaced_task_nesting": 0,
            "stamped_headers": None,
            "stamps": {},
        }
        properties = {
            "correlation_id": call_id,
            "reply_to": self.reply_to,
            "argsrepr": options.argsrepr,
            "kwargsrepr": options.kwargsrepr,
            "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": queue},
        }
        message = stored_message("[[" + encoded + _BODY_TAIL, headers, properties)
        return Delivery(queue, message, self._sent_event(call_id, queue, options))

    def _sent_event(self, call_id: str, queue: str, options: TaskOptions) -> Broadcast | None:
        return self.events.event(
            "task-sent",
            self.origin,
            uuid=call_id,
            root_id=call_id,
            parent_id=None,
            name=EXECUTE_TASK,
            args=options.argsrepr,
            kwargs=options.kwargsrepr,
            retries=0,
            eta=None,
            expires=None,
            queue=queue,
            exchange="",
            routing_key=queue,
        )

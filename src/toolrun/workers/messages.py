"""A call's Celery task message and its task-sent event, as Redis holds them.

Celery's task message (protocol 2) wrapped as kombu's Redis transport stores it: a JSON
object LPUSHed on the queue's list, its body base64-encoded. The task-sent event (which
Flower reads) is the same kind of object, published on the events' channel. Built here,
at admission, they are put on the broker by the Lua script that hands the call to its
workers (`calls.fairness`), in that script's round trip: no publish of its own, no
second trip, no Redis client per publish. `tests/integration/test_task_messages.py`
compares them with what Celery's own `send_task` writes, so a change of either format
fails there. kombu's Redis transport options are left at their defaults (no global key
prefix; fanout prefix and patterns on), as `workers.app` leaves them.
"""

from __future__ import annotations

import base64
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

import redis
from celery import Celery
from celery.utils.nodenames import anon_nodename
from celery.utils.time import utcoffset
from kombu import Connection
from kombu.transport.redis import Channel

from toolrun.calls.envelope import Envelope

EXECUTE_TASK = "toolrun.execute"
SENT_EVENT = ("celeryev", "task.sent")  # the events' exchange and the event's routing key
# The task's arguments are the envelope alone: [args, kwargs, embed] after it.
_BODY_TAIL = '], {}, {"callbacks": null, "errbacks": null, "chain": null, "chord": null}]'


@dataclass(frozen=True)
class Delivery:
    """What puts one call on the broker: its message for `queue`'s list and, unless
    events are off (then `event` is None), its task-sent event for `channel`."""

    queue: str
    message: str
    channel: str
    event: str | None

    def encoded(self) -> str:
        """As the fair queues' scripts read it (`fairness.LUA_DELIVER`)."""
        fields = {"queue": self.queue, "message": self.message}
        if self.event is not None:
            fields |= {"channel": self.channel, "event": self.event}
        return json.dumps(fields)

    def push(self, client: redis.Redis) -> None:
        """Put it on the broker from Python, in one round trip (a call sent again)."""
        pipe = client.pipeline(transaction=False)
        pipe.lpush(self.queue, self.message)
        if self.event is not None:
            pipe.publish(self.channel, self.event)
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
        self.events = bool(app.conf.task_send_sent_event)
        self.channel = events_channel(str(app.conf.broker_url)) if self.events else ""
        self._clock: Any = app.clock  # type: ignore[attr-defined]  # not in celery-types

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
        message = _wrapped("[[" + encoded + _BODY_TAIL, headers, properties)
        return Delivery(queue, message, self.channel, self._sent_event(call_id, queue, options))

    def _sent_event(self, call_id: str, queue: str, options: TaskOptions) -> str | None:
        if not self.events:
            return None
        fields = {
            "hostname": self.origin,
            "utcoffset": utcoffset(),
            "pid": os.getpid(),
            "clock": self._clock.forward(),
            "uuid": call_id,
            "root_id": call_id,
            "parent_id": None,
            "name": EXECUTE_TASK,
            "args": options.argsrepr,
            "kwargs": options.kwargsrepr,
            "retries": 0,
            "eta": None,
            "expires": None,
            "queue": queue,
            "exchange": "",
            "routing_key": queue,
            "timestamp": time.time(),
            "type": "task-sent",
        }
        exchange, routing_key = SENT_EVENT
        properties = {
            "delivery_mode": 1,
            "delivery_info": {"exchange": exchange, "routing_key": routing_key},
        }
        return _wrapped(json.dumps(fields), {"hostname": self.origin}, properties)


def _wrapped(body: str, headers: dict[str, Any], properties: dict[str, Any]) -> str:
    """A body as kombu's Redis transport stores a message: base64, with its headers and
    properties, its priority (0: the queue's own list) and a delivery tag of its own."""
    return json.dumps(
        {
            "body": base64.b64encode(body.encode()).decode(),
            "content-encoding": "utf-8",
            "content-type": "application/json",
            "headers": headers,
            "properties": {
                **properties,
                "priority": 0,
                "body_encoding": "base64",
                "delivery_tag": str(uuid.uuid4()),
            },
        }
    )


def events_channel(broker_url: str) -> str:
    """The channel the task-sent events are published on, as kombu's Redis transport
    names it for this broker (`/<database>.celeryev/task.sent`), worked out from the URL
    alone: no connection, so a broker that is away fails the push, not this."""
    database = Connection(broker_url).virtual_host
    number = 0 if not database or database == "/" else int(database.lstrip("/"))
    exchange, routing_key = SENT_EVENT
    return f"{Channel.keyprefix_fanout.format(db=number)}{exchange}/{routing_key}"

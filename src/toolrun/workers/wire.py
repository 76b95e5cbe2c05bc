"""How kombu's Redis transport stores a message and names the events' channels: the
format of what toolrun puts on the broker itself (`workers.messages`,
`workers.task_events`). kombu's Redis transport options are left at their defaults (no
global key prefix; fanout prefix and patterns on), as `workers.app` leaves them.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from kombu import Connection
from kombu.transport.redis import Channel

EVENTS_EXCHANGE = "celeryev"


def stored_message(body: str, headers: dict[str, Any], properties: dict[str, Any]) -> str:
    """A JSON body as kombu's Redis transport stores a message: base64, with its headers
    and properties, its priority (0: the queue's own list) and a delivery tag of its own."""
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


def events_channel(broker_url: str, routing_key: str) -> str:
    """The channel an event of `routing_key` is published on, as kombu's Redis transport
    names it for this broker (`/<database>.celeryev/<routing key>`), worked out from the
    URL alone: no connection, so a broker that is away fails the publish, not this."""
    database = Connection(broker_url).virtual_host
    number = 0 if not database or database == "/" else int(database.lstrip("/"))
    return f"{Channel.keyprefix_fanout.format(db=number)}{EVENTS_EXCHANGE}/{routing_key}"

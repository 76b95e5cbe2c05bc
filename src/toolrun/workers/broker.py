"""Which task messages the broker holds, read from kombu's Redis layout: one list per
queue (and per priority step, ``<queue>\\x06\\x16<n>``) and the ``unacked`` hash of
messages delivered to a worker and not yet acknowledged."""

from __future__ import annotations

import json
from collections.abc import Iterable

import redis

PRIORITY_SEPARATOR = "\x06\x16"
UNACKED = "unacked"


def held_task_ids(client: redis.Redis, queues: Iterable[str]) -> set[str]:
    """Ids of the tasks waiting in `queues` or delivered and not yet acknowledged."""
    keys = [
        key
        for queue in queues
        for key in (queue, *(f"{queue}{PRIORITY_SEPARATOR}{n}" for n in range(1, 10)))
    ]
    found = {_task_id(raw) for key in keys for raw in client.lrange(key, 0, -1)}
    found |= {_task_id(json.loads(raw)[0]) for raw in client.hvals(UNACKED)}
    return {task_id for task_id in found if task_id is not None}


def _task_id(message: bytes | str | dict[str, object]) -> str | None:
    payload = json.loads(message) if isinstance(message, bytes | str) else message
    headers = payload.get("headers") if isinstance(payload, dict) else None
    task_id = headers.get("id") if isinstance(headers, dict) else None
    return task_id if isinstance(task_id, str) else None

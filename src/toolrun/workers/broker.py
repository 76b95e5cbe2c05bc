"""Which task messages the broker holds, read from kombu's Redis layout: one list per
queue (and per priority step, ``<queue>\\x06\\x16<n>``) and the ``unacked`` hash of
messages delivered to a worker and not yet acknowledged."""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Iterable

import redis

log = logging.getLogger(__name__)
_WAIT_STEP_S = (0.2, 0.5, 1.0, 2.0)  # then 2 s between tries

PRIORITY_SEPARATOR = "\x06\x16"
UNACKED = "unacked"


def wait_for_broker(client: redis.Redis) -> None:
    """Until the broker answers (a worker started while it restarts waits for it, said
    once, rather than failing its start)."""
    for attempt in itertools.count():
        try:
            client.ping()
        except redis.AuthenticationError:
            raise  # a wrong password: waiting would not mend it
        except (redis.ConnectionError, redis.TimeoutError) as exc:  # away, or loading
            if attempt == 0:
                log.warning("the broker does not answer (%s); waiting for it", exc)
            time.sleep(_WAIT_STEP_S[min(attempt, len(_WAIT_STEP_S) - 1)])
        else:
            if attempt:
                log.warning("the broker answers again")
            return


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

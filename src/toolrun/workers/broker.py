"""The broker as toolrun uses kombu's Redis transport: which task messages it holds,
read from kombu's layout — one list per queue (and per priority step,
``<queue>\\x06\\x16<n>``) and the ``unacked`` hash of messages delivered to a worker and not
yet acknowledged — and the transport itself: one Redis client per connection pool, and
a note of which worker took each call's message in kombu's own round trip."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import time
from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any

import redis
from kombu.transport import redis as kombu_redis

from toolrun.calls import keys

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


HOLDER_OPTION = "toolrun_holder"  # a transport option: the worker taking the messages


class _QoS(kombu_redis.QoS):
    """kombu's record of the messages a consumer took and has not acknowledged, which
    also notes, in the same pipeline, which worker took each call's message (the
    connection's `HOLDER_OPTION`; `CallStore.holders`, read by the reapers)."""

    _taking: Any = None  # the message `append` is noting

    def append(self, message: Any, delivery_tag: Any) -> None:
        self._taking = message
        try:
            super().append(message, delivery_tag)
        finally:
            self._taking = None

    @cached_property
    def _holder(self) -> str | None:
        """The worker its connection takes messages for (None: not a worker's)."""
        connection: Any = self.channel.connection
        holder = (connection.client.transport_options or {}).get(HOLDER_OPTION)
        return holder if isinstance(holder, str) and holder else None

    @contextlib.contextmanager
    def pipe_or_acquire(self, pipe: Any = None, client: Any = None) -> Iterator[Any]:
        with super().pipe_or_acquire(pipe, client) as pipeline:
            taking, self._taking = self._taking, None
            if taking is not None and self._holder is not None:
                call_id = (taking.headers or {}).get("id")
                if isinstance(call_id, str):
                    pipeline.hset(keys.HOLDERS, call_id, self._holder)
            yield pipeline


class _Channel(kombu_redis.Channel):
    """kombu's Redis channel with the record above, and one Redis client for its
    synchronous commands: kombu builds a new one for each of them (`conn_or_acquire`),
    and a worker's main process runs two per task (noting the message unacknowledged,
    then acknowledging it) — with redis-py 8, tens of microseconds of the process that
    takes every message. Here one is built per connection pool (a client is a
    thread-safe view of its pool) and reused."""

    QoS = _QoS
    _reused: tuple[object, redis.Redis] | None = None

    def _create_client(self, asynchronous: bool = False) -> redis.Redis:
        if asynchronous:
            return super()._create_client(asynchronous=True)  # type: ignore[misc,no-any-return]
        pool = self.pool
        if self._reused is None or self._reused[0] is not pool:
            self._reused = (pool, super()._create_client())  # type: ignore[misc]
        return self._reused[1]


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with the channel above (`broker_transport` of toolrun's
    Celery apps: `workers.app`, where a worker's app names the worker)."""

    Channel = _Channel


TRANSPORT = f"{__name__}:Transport"

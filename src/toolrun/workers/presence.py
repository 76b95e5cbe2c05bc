"""Which machines have live workers of a level: calls routed to one machine (a terminal
session's follow-ups) must not wait forever in the queue of a machine that is gone.

Each worker renews its entry every BEAT_S; an entry not renewed for TTL_S (a worker
killed, a machine down) no longer counts, and a worker that stops removes its own.
"""

from __future__ import annotations

import contextlib
import threading
import time

import redis

from toolrun.calls import keys
from toolrun.permissions.levels import PermissionLevel

BEAT_S = 10.0
TTL_S = 30.0


class Presence:
    """A worker's presence on its machine, renewed by a daemon thread until `stop`."""

    def __init__(
        self, client: redis.Redis, machine: str, level: PermissionLevel, worker: str
    ) -> None:
        self.client = client
        self.key = keys.machine(machine, level.value)
        self.worker = worker
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="presence", daemon=True)

    def start(self) -> None:
        self.renew()
        self._thread.start()

    def renew(self) -> None:
        self.client.zadd(self.key, {self.worker: time.time() + TTL_S})

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(redis.RedisError):
            self.client.zrem(self.key, self.worker)

    def _beat(self) -> None:
        while not self._stop.wait(BEAT_S):
            with contextlib.suppress(redis.RedisError):  # the next beat tries again
                self.renew()


def has_workers(client: redis.Redis, machine: str, level: PermissionLevel) -> bool:
    """True while some worker of `level` on `machine` is present."""
    return int(client.zcount(keys.machine(machine, level.value), time.time(), "+inf")) > 0

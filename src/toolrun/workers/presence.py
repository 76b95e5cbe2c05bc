"""Which workers are alive: every worker process renews its entry in `keys.WORKERS` (and,
for a worker of a level, in its machine's list of that level) every third of its TTL; an
entry not renewed for the TTL (the worker killed, its machine down or cut off) no longer
counts, and a worker that stops removes its own.

Calls routed to one machine (a terminal session's follow-ups) must not wait forever in
the queue of a machine that is gone (`has_workers`); the calls of a lost worker are
settled by the others' reapers (`workers.reaper`, `is_alive`).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import redis

from toolrun.calls import keys
from toolrun.permissions.levels import PermissionLevel

# Redis's clock, not the workers': machines' clocks may differ by more than a TTL.
_RENEW = """
local now = redis.call('TIME')
local expires = tonumber(now[1]) + tonumber(now[2]) / 1000000 + tonumber(ARGV[2])
for _, key in ipairs(KEYS) do
    redis.call('ZADD', key, expires, ARGV[1])
end
return 1
"""
_ALIVE = """
local now = redis.call('TIME')
return redis.call('ZRANGEBYSCORE', KEYS[1], tonumber(now[1]) + tonumber(now[2]) / 1000000, '+inf')
"""


class Presence:
    """A worker's presence, renewed by a daemon thread until `stop`; `machine_key`: its
    machine's list of its level's workers (None: the delegation worker, on no such list);
    `queue`: the shared queue it serves with `slots` pool processes (`calls.fairness`)."""

    def __init__(
        self,
        client: redis.Redis,
        worker: str,
        *,
        ttl_s: float,
        machine_key: str | None,
        queue: str | None = None,
        slots: int = 1,
    ) -> None:
        self.client = client
        self.worker = worker
        self.ttl_s = ttl_s
        self.machine_key = machine_key
        self.queue = queue
        self.slots = slots
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="presence", daemon=True)

    def start(self) -> None:
        self.renew()
        self._thread.start()

    def renew(self) -> None:
        if self.queue is not None:  # its size first: counted as soon as it is listed
            self.client.hset(keys.FAIR_SLOTS, self.worker, self.slots)
        names = self._lists()
        self.client.eval(_RENEW, len(names), *names, self.worker, self.ttl_s)

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(redis.RedisError):
            pipe = self.client.pipeline(transaction=False)
            for name in self._lists():
                pipe.zrem(name, self.worker)
            pipe.hdel(keys.FAIR_SLOTS, self.worker)
            pipe.execute()

    def _lists(self) -> list[str]:
        """The lists of live workers this one is on."""
        names = [keys.WORKERS]
        if self.machine_key is not None:
            names.append(self.machine_key)
        if self.queue is not None:
            names.append(keys.fair_workers(self.queue))
        return names

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            with contextlib.suppress(redis.RedisError):  # the next beat tries again
                self.renew()


def has_workers(client: redis.Redis, machine: str, level: PermissionLevel) -> bool:
    """True while some worker of `level` on `machine` is present."""
    return bool(_alive(client, keys.machine(machine, level.value)))


def alive_workers(client: redis.Redis) -> set[str]:
    """The names of the workers alive now."""
    return _alive(client, keys.WORKERS)


def _alive(client: redis.Redis, key: str) -> set[str]:
    names: Any = client.eval(_ALIVE, 1, key)
    return {name.decode() if isinstance(name, bytes) else name for name in names}

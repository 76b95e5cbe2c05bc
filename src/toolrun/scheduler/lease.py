"""Which scheduler leads: a lease in Redis, held by one scheduler process at a time.

Several schedulers may run (on several machines); the one holding the lease advances
runs, the others stand by and take it over within `ttl_s` of the leader's loss. The
leader renews its lease every third of it, checking before each run it advances; one
that fails to renew (it was cut off) stops leading. A leader stalled longer than the
lease in the middle of advancing one run (a database or broker stall) can still finish
that step while a new leader starts: node calls have ids per attempt, so a call is never
sent twice under one id, and a run's state lives in the database, from which a new
leader resumes (see `scheduler.loop`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import redis

from toolrun.calls import keys

# Renew or give back only a lease this scheduler holds.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""


@dataclass
class Lease:
    """The scheduler lease as held by `holder` (a scheduler process's name)."""

    client: redis.Redis
    holder: str
    ttl_s: float
    _renewed_at: float = field(default=0.0, init=False)

    def acquire(self) -> bool:
        """Take the lease if nobody holds it (or renew it if this holder does)."""
        taken = self.client.set(keys.SCHEDULER_LEASE, self.holder, nx=True, px=self._ttl_ms)
        if taken or self._renew():
            self._renewed_at = time.monotonic()
            return True
        return False

    def held(self) -> bool:
        """Whether this holder still leads; renews the lease every third of its TTL."""
        if time.monotonic() - self._renewed_at < self.ttl_s / 3:
            return True
        if not self._renew():
            return False
        self._renewed_at = time.monotonic()
        return True

    def release(self) -> None:
        self.client.eval(_RELEASE, 1, keys.SCHEDULER_LEASE, self.holder)

    def leader(self) -> str | None:
        found = self.client.get(keys.SCHEDULER_LEASE)
        return found.decode() if isinstance(found, bytes) else found

    def _renew(self) -> bool:
        renewed = self.client.eval(_RENEW, 1, keys.SCHEDULER_LEASE, self.holder, self._ttl_ms)
        return bool(renewed)

    @property
    def _ttl_ms(self) -> int:
        return int(self.ttl_s * 1000)

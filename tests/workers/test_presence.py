"""Which workers are alive, by Redis's clock (real Redis)."""

from __future__ import annotations

import time

import redis

from toolrun.calls import keys
from toolrun.permissions.levels import PermissionLevel
from toolrun.workers.presence import Presence, alive_workers, has_workers


def test_a_worker_is_alive_until_its_ttl_passes_unrenewed(redis_client: redis.Redis) -> None:
    machine_key = keys.machine("m1", PermissionLevel.EXECUTE.value)
    renewed = Presence(redis_client, "execute@m1/1", ttl_s=0.3, machine_key=machine_key)
    other = Presence(redis_client, "delegation@m2/2", ttl_s=60, machine_key=None)

    renewed.renew()
    other.renew()

    assert alive_workers(redis_client) == {"execute@m1/1", "delegation@m2/2"}
    assert has_workers(redis_client, "m1", PermissionLevel.EXECUTE)
    assert not has_workers(redis_client, "m2", PermissionLevel.EXECUTE)
    time.sleep(0.4)  # not renewed for its TTL: lost
    assert alive_workers(redis_client) == {"delegation@m2/2"}
    assert not has_workers(redis_client, "m1", PermissionLevel.EXECUTE)
    other.stop()  # a worker that stops is gone at once
    assert alive_workers(redis_client) == set()

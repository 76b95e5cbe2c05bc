"""Workers report how they confine their tools' processes, so /healthz can tell operators."""

from __future__ import annotations

import json
import logging

import redis

from toolrun.calls import keys
from toolrun.sandbox.confinement import ISOLATED, Enforcement

log = logging.getLogger(__name__)


def report_isolation(client: redis.Redis, worker: str, state: Enforcement) -> None:
    """Record (and log: a warning when degraded) what this worker enforces."""
    for layer, value in (("filesystem", state.filesystem), ("network", state.network)):
        if value.startswith(ISOLATED):
            log.info("%s: %s", layer, value)
        else:
            log.warning("%s isolation %s: tool processes are not confined by it", layer, value)
    client.set(keys.network(worker), state.network)
    client.set(
        keys.filesystem(worker),
        json.dumps(
            {
                "filesystem": state.filesystem,
                "read_only_paths": list(state.read_only_paths),
                "read_write_paths": list(state.read_write_paths),
            }
        ),
    )


def withdraw_isolation_report(client: redis.Redis, worker: str) -> None:
    client.delete(keys.network(worker), keys.filesystem(worker))

"""Workers report how they confine their tools' network, so /healthz can tell operators."""

from __future__ import annotations

import logging

import redis

from toolrun.calls import keys

log = logging.getLogger(__name__)
ISOLATED = "isolated"


def report_network(client: redis.Redis, worker: str, problem: str | None) -> None:
    """Record (and log, when degraded) this worker's network isolation."""
    if problem is None:
        client.set(keys.network(worker), ISOLATED)
        return
    log.warning("network isolation %s: tool subprocesses have the host's network", problem)
    client.set(keys.network(worker), f"degraded: {problem}")


def withdraw_network_report(client: redis.Redis, worker: str) -> None:
    client.delete(keys.network(worker))

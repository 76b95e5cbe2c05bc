"""Monitoring: call counters shared through Redis, Prometheus families, structured logs."""

from toolrun.monitoring.collector import PlatformCollector
from toolrun.monitoring.logs import configure_logging
from toolrun.monitoring.monitor import CallMonitor
from toolrun.monitoring.snapshot import Snapshot, read_snapshot

__all__ = [
    "CallMonitor",
    "PlatformCollector",
    "Snapshot",
    "configure_logging",
    "read_snapshot",
]

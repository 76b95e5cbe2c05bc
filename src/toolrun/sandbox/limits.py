"""Resource limits applied to every tool subprocess, set in the child before exec."""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceLimits:
    """Per-process caps; None leaves a limit as inherited."""

    cpu_seconds: int | None = None
    memory_bytes: int | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None

    def with_cpu_for(self, timeout_s: float) -> ResourceLimits:
        """Copy whose CPU cap backs up a wall-clock timeout (one second of slack)."""
        return ResourceLimits(
            cpu_seconds=math.ceil(timeout_s) + 1,
            memory_bytes=self.memory_bytes,
            file_size_bytes=self.file_size_bytes,
            open_files=self.open_files,
        )

    def as_rlimits(self, *, processes: int | None = None) -> tuple[tuple[int, int], ...]:
        """The limits as (RLIMIT_*, value) pairs for a jail, which applies them last.

        `processes` (RLIMIT_NPROC) only inside a jail: there it counts the processes of the
        jail's own user namespace; outside, every process of the worker's user.
        """
        pairs = (
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_AS, self.memory_bytes),
            (resource.RLIMIT_FSIZE, self.file_size_bytes),
            (resource.RLIMIT_NOFILE, self.open_files),
            (resource.RLIMIT_NPROC, processes),
        )
        return tuple((which, value) for which, value in pairs if value is not None)

    def apply(self) -> None:
        """Lower this process's limits; runs in the child between fork and exec."""
        _lower(resource.RLIMIT_CORE, 0)
        _lower(resource.RLIMIT_CPU, self.cpu_seconds)
        _lower(resource.RLIMIT_AS, self.memory_bytes)
        _lower(resource.RLIMIT_FSIZE, self.file_size_bytes)
        _lower(resource.RLIMIT_NOFILE, self.open_files)


def _lower(which: int, value: int | None) -> None:
    if value is None:
        return
    _soft, hard = resource.getrlimit(which)
    capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (capped, capped))

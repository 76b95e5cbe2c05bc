"""How many pool processes each worker of `toolrun up` runs: from the machine's cores and
memory and from what its level's tools do.

A pool process runs one call at a time. A tool that starts processes (bash, grep, git…)
mostly waits on them while they use a core, so its level gets twice as many slots as
there are cores (at least four: a plan's independent nodes run side by side on a small
machine); a level of in-process tools only gets one slot per core (at least two). Memory
caps the total: each slot is budgeted `SLOT_BYTES` (a pool process and the tools it
waits on), out of half the memory available when the platform starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

from toolrun.permissions.levels import DELEGATION_ROLE, PermissionLevel
from toolrun.tools.base import Tool

SLOT_BYTES = 256 * 1024**2
MIN_PROCESS_SLOTS = 4
MIN_IN_PROCESS_SLOTS = 2
MAX_SLOTS = 32


@dataclass(frozen=True)
class Machine:
    cores: int
    available_bytes: int

    @classmethod
    def here(cls) -> Machine:
        """The cores this process may run on and the memory available now."""
        return cls(len(os.sched_getaffinity(0)), psutil.virtual_memory().available)


def pool_sizes(tools: Iterable[Tool], machine: Machine) -> dict[str, int]:
    """Pool processes per worker: one entry per permission level, and `delegation` for
    the sub-agents' worker (whose Task calls mostly wait on their agents' calls)."""
    waits_on_processes = dict.fromkeys(PermissionLevel, False)
    for tool in tools:
        if tool.starts_processes:
            waits_on_processes[tool.descriptor.permission] = True
    wanted = {
        str(level): (
            max(MIN_PROCESS_SLOTS, 2 * machine.cores)
            if waits
            else max(MIN_IN_PROCESS_SLOTS, machine.cores)
        )
        for level, waits in waits_on_processes.items()
    }
    wanted[DELEGATION_ROLE] = max(MIN_IN_PROCESS_SLOTS, machine.cores)
    budget = max(len(wanted), machine.available_bytes // 2 // SLOT_BYTES)
    total = sum(wanted.values())
    scale = min(1.0, budget / total)
    return {name: max(1, min(MAX_SLOTS, int(slots * scale))) for name, slots in wanted.items()}

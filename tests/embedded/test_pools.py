"""Default pool sizes of `toolrun up`: from the cores, the memory and the tools' nature."""

from __future__ import annotations

from toolrun.embedded.pools import SLOT_BYTES, Machine, pool_sizes
from toolrun.tools.registry import ToolRegistry

GIB = 1024**3
BUILTINS = ToolRegistry.with_builtins().list()


def test_levels_of_tools_that_wait_on_processes_get_twice_the_cores() -> None:
    sizes = pool_sizes(BUILTINS, Machine(cores=8, available_bytes=64 * GIB))

    # bash, git, grep… start processes and wait on them: 2 slots per core.
    assert sizes["execute"] == 16
    assert sizes["read_only"] == 16
    assert sizes["delegation"] == 8


def test_a_small_machine_still_runs_four_process_tools_side_by_side() -> None:
    sizes = pool_sizes(BUILTINS, Machine(cores=1, available_bytes=16 * GIB))

    assert sizes["execute"] == 4  # a plan's four independent bash nodes at once
    assert sizes["delegation"] == 2


def test_a_level_of_in_process_tools_gets_one_slot_per_core() -> None:
    in_process = [tool for tool in BUILTINS if not tool.starts_processes]
    sizes = pool_sizes(in_process, Machine(cores=6, available_bytes=64 * GIB))

    assert sizes["read_write"] == 6  # edit and write only
    assert sizes["execute"] == 6  # no tool at all: nothing waits on processes there
    assert sizes["read_only"] == 6


def test_memory_caps_the_total_and_leaves_every_worker_a_slot() -> None:
    roomy = pool_sizes(BUILTINS, Machine(cores=16, available_bytes=256 * GIB))
    tight = pool_sizes(BUILTINS, Machine(cores=16, available_bytes=8 * SLOT_BYTES))

    assert sum(roomy.values()) == 4 * 32 + 16
    assert sum(tight.values()) <= max(len(tight), 4)
    assert all(slots >= 1 for slots in tight.values())
    assert set(tight) == {"read_only", "read_write", "execute", "admin", "delegation"}

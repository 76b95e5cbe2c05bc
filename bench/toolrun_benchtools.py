"""The DAG benchmark's tools, loaded by the platform's processes through TOOLRUN_TOOL_MODULES
(with bench/ on PYTHONPATH): a no-op and an in-process sleep, both read-only."""

from __future__ import annotations

import time
from typing import Any

from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample

MAX_SLEEP_S = 10.0


class BenchNoop(Tool):
    """Returns at once: a node's cost is then all platform."""

    descriptor = ToolDescriptor(
        name="bench_noop",
        version="1.0.0",
        description="Do nothing and return an empty object (benchmarks of the platform).",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        returns={"type": "object"},
        examples=[
            ToolExample(description="the only call there is", arguments={}),
            ToolExample(description="as a plan's root", arguments={}),
            ToolExample(description="as a plan's sink", arguments={}),
        ],
        permission=PermissionLevel.READ_ONLY,
        time_limit_s=5.0,
        tags=["bench"],
        category="bench",
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput({})


class BenchSleep(Tool):
    """Sleeps in the pool process: holds a worker slot without using the CPU."""

    descriptor = ToolDescriptor(
        name="bench_sleep",
        version="1.0.0",
        description="Sleep in-process for `seconds`, then return how long it slept.",
        parameters={
            "type": "object",
            "properties": {
                "seconds": {"type": "number", "minimum": 0, "maximum": MAX_SLEEP_S, "default": 1}
            },
            "additionalProperties": False,
        },
        returns={"type": "object", "properties": {"slept_s": {"type": "number"}}},
        examples=[
            ToolExample(description="one second (the default)", arguments={}),
            ToolExample(description="a tenth of a second", arguments={"seconds": 0.1}),
            ToolExample(description="the longest allowed", arguments={"seconds": MAX_SLEEP_S}),
        ],
        permission=PermissionLevel.READ_ONLY,
        time_limit_s=MAX_SLEEP_S + 5,
        tags=["bench"],
        category="bench",
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        started = time.perf_counter()
        time.sleep(arguments.get("seconds", 1))
        return ToolOutput({"slept_s": round(time.perf_counter() - started, 6)})


TOOLS: list[Tool] = [BenchNoop(), BenchSleep()]

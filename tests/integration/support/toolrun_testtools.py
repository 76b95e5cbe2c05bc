"""Tools that misbehave on purpose, loaded by test workers through TOOLRUN_TOOL_MODULES."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample

_SECONDS = {"type": "number", "minimum": 0}
_PID_FILE = {"type": "string", "description": "Workspace file that receives the pool pid."}


def _descriptor(
    name: str,
    description: str,
    time_limit_s: float,
    permission: PermissionLevel = PermissionLevel.READ_ONLY,
    *,
    repeat_safe: bool = False,
) -> ToolDescriptor:
    return ToolDescriptor(
        name=name,
        version="1.0.0",
        description=description,
        parameters={
            "type": "object",
            "properties": {"seconds": _SECONDS, "pid_file": _PID_FILE},
            "additionalProperties": False,
        },
        returns={"type": "object"},
        examples=[
            ToolExample(description="default", arguments={}),
            ToolExample(description="short", arguments={"seconds": 0.1}),
            ToolExample(description="with pid", arguments={"seconds": 1, "pid_file": "pid"}),
        ],
        permission=permission,
        time_limit_s=time_limit_s,
        repeat_safe=repeat_safe,
        tags=["test"],
    )


def _note_pid(arguments: dict[str, Any], ctx: ToolContext) -> None:
    """Append this process's pid to the pid file (one line per delivery)."""
    if "pid_file" in arguments:
        path = Path(ctx.workspace.resolve(arguments["pid_file"]))
        with path.open("a") as handle:
            handle.write(f"{os.getpid()}\n")


class Sleepy(Tool):
    """Sleeps in Python (no subprocess): only Celery's soft limit can stop it. As
    `sleepy` it declares itself safe to run twice (a lost worker's call runs again), as
    `sleepy_once` not (it ends with an error instead)."""

    def __init__(self, name: str = "sleepy", *, repeat_safe: bool = True) -> None:
        self.descriptor = _descriptor(
            name, "Sleep in-process for `seconds`.", time_limit_s=2, repeat_safe=repeat_safe
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _note_pid(arguments, ctx)
        time.sleep(arguments.get("seconds", 1))
        return ToolOutput({"slept": arguments.get("seconds", 1), "pid": os.getpid()})


class Stubborn(Tool):
    """Swallows the soft limit and keeps sleeping: only the hard limit stops it."""

    descriptor = _descriptor("stubborn", "Ignore the soft time limit.", time_limit_s=1)

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _note_pid(arguments, ctx)
        deadline = time.monotonic() + arguments.get("seconds", 60)
        while time.monotonic() < deadline:
            try:
                time.sleep(0.05)
            except Exception:  # noqa: S112 - the point of this tool
                continue
        return ToolOutput({"survived": True})


class Suicidal(Tool):
    """Kills its own pool process on every delivery."""

    descriptor = _descriptor(
        "suicidal", "SIGKILL the process running it.", time_limit_s=5, repeat_safe=True
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _note_pid(arguments, ctx)
        os.kill(os.getpid(), signal.SIGKILL)
        return ToolOutput({})


class Probe(Tool):
    """Does nothing at its level but note that it ran: the permission matrix's subject."""

    def __init__(self, level: PermissionLevel) -> None:
        self.descriptor = _descriptor(
            f"probe_{level}", f"Note a run at level {level}.", time_limit_s=5, permission=level
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _note_pid(arguments, ctx)
        return ToolOutput({"level": self.descriptor.permission.value})


class Flaky(Tool):
    """Fails until it has been called `fail_times` times for its counter file, then says
    which attempt it is: the subject of retry policies."""

    descriptor = ToolDescriptor(
        name="flaky",
        version="1.0.0",
        description="Fail the first `fail_times` calls per counter file.",
        parameters={
            "type": "object",
            "properties": {
                "counter": {"type": "string"},
                "fail_times": {"type": "integer", "minimum": 0},
            },
            "required": ["counter", "fail_times"],
            "additionalProperties": False,
        },
        returns={"type": "object"},
        examples=[
            ToolExample(description="never fails", arguments={"counter": "c", "fail_times": 0}),
            ToolExample(description="fails once", arguments={"counter": "c", "fail_times": 1}),
            ToolExample(description="fails twice", arguments={"counter": "d", "fail_times": 2}),
        ],
        permission=PermissionLevel.READ_ONLY,
        time_limit_s=5,
        tags=["test"],
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = Path(ctx.workspace.resolve(arguments["counter"]))
        calls = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(calls))
        if calls <= arguments["fail_times"]:
            raise ToolExecutionError(f"failing on purpose (call {calls})")
        return ToolOutput({"calls": calls})


class Guarded(Tool):
    """A high-risk tool (never auto-approved) with a defaulted argument: it writes `mode`
    to `marker`. The subject of standing rules on defaulted arguments."""

    descriptor = ToolDescriptor(
        name="guarded",
        version="1.0.0",
        description="Write `mode` to `marker`, after an approval.",
        parameters={
            "type": "object",
            "properties": {
                "marker": {"type": "string"},
                "mode": {"type": "string", "enum": ["careful", "bold"], "default": "careful"},
            },
            "required": ["marker"],
            "additionalProperties": False,
        },
        returns={"type": "object"},
        examples=[
            ToolExample(description="careful", arguments={"marker": "m"}),
            ToolExample(description="bold", arguments={"marker": "m", "mode": "bold"}),
            ToolExample(description="other marker", arguments={"marker": "n"}),
        ],
        permission=PermissionLevel.READ_WRITE,
        risk=Risk.HIGH,
        requires_confirmation=True,
        time_limit_s=5,
        tags=["test"],
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        Path(ctx.workspace.resolve(arguments["marker"])).write_text(arguments["mode"])
        return ToolOutput({"mode": arguments["mode"]})


TOOLS: list[Tool] = [
    Sleepy(),
    Sleepy("sleepy_once", repeat_safe=False),
    Flaky(),
    Guarded(),
    Stubborn(),
    Suicidal(),
    *(Probe(level) for level in PermissionLevel),
]

"""terminal: interactive programs on a pseudo-terminal, driven step by step."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.errors import SandboxViolation, ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Risk
from toolrun.sandbox.denials import denials
from toolrun.terminal.client import HostClient, lost_message
from toolrun.terminal.session import KEYS
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin.bash import BASH, command_policy
from toolrun.tools.model import ToolDescriptor, ToolExample

HOST_IDLE_S = 600.0
SESSION_PATTERN = "^[a-z0-9]{1,32}-[0-9a-f]{16}$"
MAX_SOCKET_PATH_BYTES = 100  # of the 107 a unix socket path may have, with room to spare
REQUEST_SLACK_S = 10.0
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _needs(operations: list[str], names: list[str]) -> dict[str, Any]:
    """A schema rule: these operations require these parameters."""
    return {
        "if": {"properties": {"operation": {"enum": operations}}, "required": ["operation"]},
        "then": {"required": names},
    }


DESCRIPTOR = ToolDescriptor.builtin(
    name="terminal",
    version="1.0.0",
    description=(
        "Drive an interactive program (a REPL, a prompt, a text UI) on a pseudo-terminal, "
        "step by step: `open` starts a command and returns a session id; `send` types text "
        "and keys (enter, tab, ctrl-c, arrows...); `read` returns the output since the last "
        "read, and with `screen` the screen as a terminal shows it; `wait_for` waits until "
        "the output matches a regex; `resize`; `close`. Sessions idle for 10 minutes end."
    ),
    parameters={
        "type": "object",
        "properties": {
            "operation": {"enum": ["open", "send", "read", "wait_for", "resize", "close"]},
            "command": {"type": "string", "minLength": 1, "description": "open: what to run."},
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string", "maxLength": 4096},
                "description": "open: extra environment variables (not PATH, LD_*, ...).",
            },
            "session": {
                "type": "string",
                "pattern": SESSION_PATTERN,
                "description": "From open: the machine that holds it, '-', its id there.",
            },
            "text": {"type": "string", "description": "send: text to type."},
            "keys": {
                "type": "array",
                "items": {"enum": sorted(KEYS)},
                "description": "send: keys pressed after the text.",
            },
            "screen": {"type": "boolean", "default": False, "description": "read: add the screen."},
            "pattern": {"type": "string", "minLength": 1, "description": "wait_for: a regex."},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 120, "default": 10},
            "cols": {"type": "integer", "minimum": 20, "maximum": 500, "default": 120},
            "rows": {"type": "integer", "minimum": 5, "maximum": 200, "default": 40},
        },
        "required": ["operation"],
        # What each operation needs: open a command, the others an open session,
        # wait_for a pattern too.
        "allOf": [
            _needs(["open"], ["command"]),
            _needs(["send", "read", "wait_for", "resize", "close"], ["session"]),
            _needs(["wait_for"], ["pattern"]),
        ],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "session": {"type": "string"},
            "output": {"type": "string", "description": "New output, escape sequences removed."},
            "screen": {"type": "array", "items": {"type": "string"}},
            "matched": {"type": "boolean"},
            "alive": {"type": "boolean"},
            "exit_code": {"type": ["integer", "null"]},
            "jail_denied": {
                "type": "array",
                "description": "Paths outside the workspace the sandbox refused the session's "
                "programs, as they said it (only when there are some).",
                "items": {"type": "object"},
            },
        },
    },
    examples=[
        ToolExample(
            description="Start a Python REPL",
            arguments={"operation": "open", "command": "python3 -q"},
        ),
        ToolExample(
            description="Type an expression and press Enter",
            arguments={
                "operation": "send",
                "session": "5bce98f73f-3f9a0c1b2d4e5f60",
                "text": "1+1",
                "keys": ["enter"],
            },
        ),
        ToolExample(
            description="Wait for the prompt to come back",
            arguments={
                "operation": "wait_for",
                "session": "5bce98f73f-3f9a0c1b2d4e5f60",
                "pattern": "^>>> ",
                "timeout": 5,
            },
        ),
        ToolExample(
            description="Use an interactive database shell step by step",
            arguments={"operation": "open", "command": "sqlite3 data.db"},
        ),
        ToolExample(
            description="Answer an interactive program's prompts",
            arguments={
                "operation": "send",
                "session": "5bce98f73f-3f9a0c1b2d4e5f60",
                "text": "y",
                "keys": ["enter"],
            },
        ),
    ],
    notes=[
        "`open` is judged like a bash command (the command allowlist applies, and its "
        "risk sets its policy) and always needs at least confirmation: whatever is typed "
        "into the session afterwards is not checked again, and sessions are not inside "
        "the network jail.",
        "Sessions live in the terminal host of the worker's machine, so every worker "
        "process there reaches them, and a session's id names its machine: calls for it "
        "are routed to that machine's execute workers. A session whose host restarted, "
        "that expired or was closed, or whose machine has no live worker answers "
        "'session ... is lost'. A session belongs to the agent that opened it.",
        "Output since the last read is kept up to 256 KiB; `dropped_chars` counts the rest.",
    ],
    permission=PermissionLevel.EXECUTE,
    risk=Risk.HIGH,
    tags=["shell", "execute", "terminal"],
    category="execution",
    time_limit_s=150,
)


class TerminalTool(Tool):
    descriptor = DESCRIPTOR

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern:
        if arguments["operation"] != "open":
            return Concern(Risk.LOW, "terminal acts on a session already opened")
        # The command parser is slow to import: imported by the call, not the registry.
        from toolrun.permissions.risk import assess_command  # noqa: PLC0415

        command = _required(arguments, "command")
        _check_env(arguments.get("env", {}))
        policy = command_policy(ctx.settings)
        if policy is not None:
            policy.check(command, ctx.workspace)
        assessment = assess_command(command, ctx.workspace)
        risk = max(assessment.risk, Risk.MEDIUM, key=list(Risk).index)
        return Concern(
            risk,
            f"terminal opens an interactive session ({assessment.summary}; what is typed "
            f"into it later is not checked): {command}",
        )

    def machine(self, arguments: dict[str, Any]) -> str | None:
        """A session's calls go to the machine that holds it (named in its id)."""
        session = arguments.get("session")
        if arguments["operation"] == "open" or not isinstance(session, str):
            return None
        return session.partition("-")[0]

    def stranded(self, arguments: dict[str, Any], machine: str) -> str:
        return lost_message(
            arguments["session"], f"its machine {machine} has no live execute worker"
        )

    def time_limit_s(self, arguments: dict[str, Any], settings: Settings) -> float:
        return float(arguments.get("timeout", 10)) + REQUEST_SLACK_S

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        operation = arguments["operation"]
        host = HostClient(host_socket(ctx.settings), idle_s=HOST_IDLE_S)
        # A session belongs to the agent that opened it: another agent finds it "lost".
        request: dict[str, Any] = {"op": operation, "agent_id": ctx.agent_id}
        if operation == "open":
            self.assess(arguments, ctx)  # the allowlist, again where the call runs
            request |= {
                "machine": ctx.settings.machine_id,  # the session's id starts with it
                "argv": [BASH, "--noprofile", "--norc", "-c", arguments["command"]],
                "cwd": str(ctx.workspace.root),
                "env": {**ctx.runner.env, "TERM": "xterm", **arguments.get("env", {})},
                "cols": arguments["cols"],
                "rows": arguments["rows"],
                **_confinement(ctx),
            }
        else:
            session = str(_required(arguments, "session"))
            machine = session.partition("-")[0]
            if machine != ctx.settings.machine_id:  # routed here by hand, or misrouted
                why = f"it is held by machine {machine}, not this one"
                raise ToolExecutionError(lost_message(session, why))
            request["session"] = session
        if operation == "send":
            request |= {"text": arguments.get("text", ""), "keys": arguments.get("keys", [])}
        elif operation == "read":
            request["screen"] = arguments["screen"]
        elif operation == "wait_for":
            request |= {"pattern": _pattern(arguments), "timeout_s": arguments["timeout"]}
        elif operation == "resize":
            request |= {"cols": arguments["cols"], "rows": arguments["rows"]}
        answer = host.request(request, timeout_s=self.time_limit_s(arguments, ctx.settings))
        answer.pop("ok", None)
        said = answer.get("output")
        if ctx.runner.jail is not None and isinstance(said, str):
            refused = denials(said, ctx.workspace.root)
            if refused:  # what the session's jail refused, for the agent and the log
                answer["jail_denied"] = [{"path": path, "error": why} for path, why in refused]
        return ToolOutput(answer)


def _confinement(ctx: ToolContext) -> dict[str, Any]:
    """How the host confines the session: a jail of its own (private /tmp and HOME for the
    session's life, no network: the call's proxy ends with the call), else the limits."""
    runner = ctx.runner
    runner.refuse_if_barred(None)  # the session host starts the session's program
    tracking = {"use_cgroups": runner.use_cgroups, "max_processes": runner.max_processes}
    if runner.jail is not None:
        lasting = dataclasses.replace(runner, jail=runner.jail.lasting())
        return {"jail": lasting.plan(ctx.workspace.root, terminal=True).to_json(), **tracking}
    limits = runner.limits
    return {
        **tracking,
        "limits": {
            "memory_bytes": limits.memory_bytes,
            "file_size_bytes": limits.file_size_bytes,
            "open_files": limits.open_files,
        },
    }


def host_socket(settings: Settings) -> Path:
    """This machine's host socket: in the platform's home, or, where that path would be
    too long for a unix socket (107 bytes), in a private directory of this user's in the
    temporary directory."""
    path = settings.platform_home / "terminal" / f"{settings.machine_id}.sock"
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH_BYTES:
        return path
    key = hashlib.sha256(os.fsencode(path)).hexdigest()[:16]
    return _private_dir(Path(tempfile.gettempdir()) / f"toolrun-{os.getuid()}") / f"{key}.sock"


def _private_dir(path: Path) -> Path:
    """`path`, a directory only this user can enter (created so).

    Raises:
        ToolExecutionError: it is a link, someone else's, or open to others.
    """
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    found = path.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise ToolExecutionError(f"{path} is not a private directory of this user")
    return path


def _required(arguments: dict[str, Any], name: str) -> Any:
    if name not in arguments:
        raise ToolExecutionError(f"terminal {arguments['operation']} needs {name}")
    return arguments[name]


def _check_env(env: dict[str, str]) -> None:
    from toolrun.sandbox.commands import dangerous_assignment  # noqa: PLC0415 - as in assess

    for name in env:
        if not _ENV_NAME.match(name) or dangerous_assignment(name):
            raise SandboxViolation(f"setting {name} is not allowed: it changes what runs")


def _pattern(arguments: dict[str, Any]) -> str:
    pattern = str(_required(arguments, "pattern"))
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ToolExecutionError(f"pattern {pattern!r} is not a valid regex: {exc}") from exc
    return pattern

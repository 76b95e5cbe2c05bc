"""File and command tools in the iteration's directory: list_files (the file tier,
read_write) and run_command, check_tests and check_lint (the command tier, execute: they
run programs through the bash tool's sandbox — allowlist, network jail, limits — and are
assessed like bash commands)."""

from __future__ import annotations

import os
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Risk
from toolrun.permissions.risk import assess_command
from toolrun.sandbox.commands import CommandPolicy
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin.bash import command_policy, run_command_line
from toolrun_workflow.base import descriptor
from toolrun_workflow.iterations import Iteration, current_iteration

MAX_FILES = 2000
COMMAND_TIMEOUT_S = 300.0
_TIMEOUT = {"type": "number", "exclusiveMinimum": 0, "maximum": COMMAND_TIMEOUT_S}


class ListFiles(Tool):
    descriptor = descriptor(
        "list_files",
        "The files in the iteration's directory (paths relative to it, sizes), optionally "
        "below a subdirectory; at most 2000.",
        {"below": {"type": "string", "minLength": 1, "description": "A subdirectory."}},
        [
            ("Everything", {}),
            ("The data files", {"below": "data"}),
            ("The code", {"below": "workspace"}),
        ],
        group="file",
        permission=PermissionLevel.READ_WRITE,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, directory = current_iteration(ctx)
        start = ctx.workspace.resolve(str(iteration.directory / arguments.get("below", ".")))
        if not start.is_relative_to(directory):
            raise ToolExecutionError("below must stay inside the iteration's directory")
        files = []
        for root, dirs, names in os.walk(start):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.startswith("."):
                    continue
                path = os.path.join(root, name)
                if os.path.islink(path):
                    continue
                files.append(
                    {"path": os.path.relpath(path, directory), "size": os.path.getsize(path)}
                )
        return ToolOutput({"files": files[:MAX_FILES], "truncated": len(files) > MAX_FILES})


class CommandTool(Tool):
    """Runs a command line in the iteration's directory, like the bash tool."""

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern:
        command = self.command(arguments, current_iteration(ctx)[0])
        policy: CommandPolicy | None = command_policy(ctx.settings)
        if policy is not None:
            policy.check(command, ctx.workspace)
        assessment = assess_command(command, ctx.workspace)
        return Concern(
            assessment.risk,
            f"{self.descriptor.name} runs a command ({assessment.summary}): {command}",
        )

    def command(self, arguments: dict[str, Any], iteration: Iteration) -> str:
        return str(arguments["command"])

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, directory = current_iteration(ctx)
        command = self.command(arguments, iteration)
        timeout = float(
            arguments.get("timeout", min(COMMAND_TIMEOUT_S, ctx.settings.bash_max_timeout_s))
        )
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return run_command_line(command, timeout, ctx, cwd_fd=fd)
        finally:
            os.close(fd)


class RunCommand(CommandTool):
    descriptor = descriptor(
        "run_command",
        "Run a shell command in the iteration's directory (the command allowlist, network "
        "jail and limits of the bash tool apply); returns stdout, stderr and exit_code.",
        {"command": {"type": "string", "minLength": 1}, "timeout": _TIMEOUT},
        [
            ("List the tree", {"command": "ls -R"}),
            ("Run a script", {"command": "python3 build.py", "timeout": 60}),
            ("Count lines", {"command": "wc -l data/*.json"}),
        ],
        required=("command",),
        group="command",
        permission=PermissionLevel.EXECUTE,
        risk=Risk.HIGH,  # the most a command can be; each call is assessed
        time_limit_s=COMMAND_TIMEOUT_S,
    )


class CheckCommand(CommandTool):
    """Runs the iteration's configured test or lint command: a pass/fail report."""

    def __init__(self, name: str, what: str, attribute: str) -> None:
        self.what, self.attribute = what, attribute
        self.descriptor = descriptor(
            name,
            f"Run the iteration's {what} command (set by start_iteration's {attribute}) in "
            "its directory; a pass/fail report with the output.",
            {"timeout": _TIMEOUT},
            [
                (f"Run the {what}", {}),
                (f"The {what}, with a short limit", {"timeout": 30}),
                (f"Re-run the {what}", {}),
            ],
            group="validation",
            permission=PermissionLevel.EXECUTE,
            risk=Risk.HIGH,
            time_limit_s=COMMAND_TIMEOUT_S,
        )
        super().__init__()

    def command(self, arguments: dict[str, Any], iteration: Iteration) -> str:
        configured = getattr(iteration, self.attribute)
        if not configured:
            raise ToolExecutionError(
                f"iteration {iteration.id} has no {self.attribute}: start it with one"
            )
        return str(configured)

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, _ = current_iteration(ctx)
        try:
            ran = super().run(arguments, ctx).output
            passed = True
        except ToolExecutionError as exc:
            if exc.output is None:
                raise
            ran, passed = exc.output, False
        return ToolOutput(
            {
                "check": self.what,
                "passed": passed,
                "command": self.command(arguments, iteration),
                **ran,
            }
        )


def command_tools() -> list[Tool]:
    return [
        ListFiles(),
        RunCommand(),
        CheckCommand("check_tests", "test", "test_command"),
        CheckCommand("check_lint", "lint", "lint_command"),
    ]

"""File and command tools: list_files in the iteration's directory (the file tier,
read_write, medium) and run_command, check_tests and check_lint in its workspace/
subdirectory (the command tier, execute, high: they run programs through the bash tool's
sandbox — allowlist, network jail, limits — with workspace/ as the sandbox's workspace,
and are assessed like bash commands there)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Risk
from toolrun.sandbox.fs import open_directory
from toolrun.sandbox.paths import Workspace
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin.bash import command_risk, run_command_line
from toolrun_workflow.base import descriptor
from toolrun_workflow.iterations import WORK, Iteration, current_iteration

MAX_FILES = 2000
COMMAND_TIMEOUT_S = 300.0
_TIMEOUT = {"type": "number", "exclusiveMinimum": 0, "maximum": COMMAND_TIMEOUT_S}


class ListFiles(Tool):
    descriptor = descriptor(
        "list_files",
        "The files in the iteration's directory (paths relative to it, sizes), optionally "
        "below a subdirectory; at most 2000. Symbolic links are neither listed nor followed.",
        {"below": {"type": "string", "minLength": 1, "description": "A subdirectory."}},
        [
            ("Everything", {}),
            ("The data files", {"below": "data"}),
            ("The code", {"below": WORK}),
        ],
        group="file",
        permission=PermissionLevel.READ_WRITE,
        risk=Risk.MEDIUM,  # the file tier; each call only reads, so it runs at once
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        start = folder.path(arguments.get("below", "."))  # inside it, through no link
        if not start.is_dir():
            raise ToolExecutionError(f"{folder.display(start)} is not a directory")
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
                    {"path": os.path.relpath(path, folder.root), "size": os.path.getsize(path)}
                )
        return ToolOutput({"files": files[:MAX_FILES], "truncated": len(files) > MAX_FILES})


class CommandTool(Tool):
    """Runs a command line in the iteration's workspace/ directory, like the bash tool
    with that directory as its workspace: the sandbox's checks of redirections and
    written paths keep the command away from the documents and data/ above it."""

    def sandboxed(self, ctx: ToolContext) -> tuple[Iteration, ToolContext]:
        """The iteration, and `ctx` with its workspace/ directory as the workspace (and
        the commands' home, so `~` stays in it too)."""
        iteration, folder = current_iteration(ctx)
        work = folder.folder(WORK)  # a symbolic link is refused
        jail = ctx.runner.jail
        runner = dataclasses.replace(
            ctx.runner,
            cwd=work.root,
            env={**ctx.runner.env, "HOME": str(work.root)},
            jail=None if jail is None else jail.within(work.root),  # workspace/ only
        )
        inner = Workspace(work.root, protected=ctx.workspace.protected)
        return iteration, dataclasses.replace(ctx, workspace=inner, runner=runner)

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern:
        iteration, inner = self.sandboxed(ctx)
        command = self.command(arguments, iteration)
        risk, summary = command_risk(command, inner)  # judged with workspace/ as the workspace
        return Concern(
            risk, f"{self.descriptor.name} runs a command in {WORK}/ ({summary}): {command}"
        )

    def command(self, arguments: dict[str, Any], iteration: Iteration) -> str:
        return str(arguments["command"])

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, inner = self.sandboxed(ctx)
        command = self.command(arguments, iteration)
        timeout = float(
            arguments.get("timeout", min(COMMAND_TIMEOUT_S, ctx.settings.bash_max_timeout_s))
        )
        with open_directory(ctx.workspace, inner.workspace.root) as fd:
            return run_command_line(command, timeout, inner, cwd_fd=fd)


class RunCommand(CommandTool):
    descriptor = descriptor(
        "run_command",
        f"Run a shell command in the iteration's {WORK}/ directory (the bash tool's "
        "sandbox with that directory as the workspace: the command allowlist, writes "
        "outside it refused or held for approval, the network jail, limits); returns "
        "stdout, stderr and exit_code.",
        {"command": {"type": "string", "minLength": 1}, "timeout": _TIMEOUT},
        [
            ("List the tree", {"command": "ls -R"}),
            ("Run a script", {"command": "python3 build.py", "timeout": 60}),
            ("Count lines", {"command": "wc -l *.py"}),
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
            f"its {WORK}/ directory, sandboxed like run_command; a pass/fail report with "
            "the output.",
            {"timeout": _TIMEOUT},
            [
                (f"Run the {what}", {}),
                (f"The {what}, with a short limit", {"timeout": 30}),
                (f"Re-run the {what}", {}),
            ],
            group="validation",
            permission=PermissionLevel.EXECUTE,
            risk=Risk.HIGH,  # it runs a command: the command tier, not the validation one
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

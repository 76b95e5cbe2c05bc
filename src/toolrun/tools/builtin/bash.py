"""bash: a shell command in the workspace, in its own process group, killed on timeout.

The command parser (bashlex, slow to import) is imported by the checks that parse a
command, not with the registry."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Any

from toolrun.config import Settings
from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Risk
from toolrun.sandbox.denials import denials
from toolrun.sandbox.output import CappedLines
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample

if TYPE_CHECKING:
    from toolrun.sandbox.commands import CommandPolicy

BASH = "/bin/bash"

DESCRIPTOR = ToolDescriptor.builtin(
    name="bash",
    version="1.0.0",
    description=(
        "Run a bash command with the workspace as working directory and return stdout, "
        "stderr, exit_code, timed_out and duration_s. Runs in its own session with stdin "
        "from /dev/null, a scrubbed environment and resource limits. On timeout the whole "
        "process tree is killed; background jobs never outlive the call. Long output keeps "
        "its head and tail with '[N lines omitted]' between."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The command line."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Seconds before the command is killed. Default: the operator's "
                "setting (10 s unless configured); the operator also sets the maximum.",
            },
            "description": {"type": "string", "description": "What the command does, for humans."},
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "exit_code": {"type": ["integer", "null"], "description": "null when timed out."},
            "timed_out": {"type": "boolean"},
            "duration_s": {"type": "number"},
            "jail_denied": {
                "type": "array",
                "description": "Paths outside the workspace the sandbox refused the command "
                "(only when it was refused some).",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "error": {"type": "string"}},
                },
            },
        },
    },
    examples=[
        ToolExample(
            description="Run the test suite", arguments={"command": "pytest -q", "timeout": 120}
        ),
        ToolExample(
            description="Build the project with make",
            arguments={"command": "make build", "description": "build"},
        ),
        ToolExample(description="Count lines of Python", arguments={"command": "cat *.py | wc -l"}),
        ToolExample(
            description="Install the project's dependencies with pip",
            arguments={"command": "pip install -r requirements.txt"},
        ),
        ToolExample(
            description="Check which version of Node is installed",
            arguments={"command": "node --version"},
        ),
        ToolExample(
            description="Run a shell script from the repository",
            arguments={"command": "./scripts/setup.sh"},
        ),
    ],
    notes=[
        "A non-zero exit code is reported as status error with the output kept.",
        "Each call's risk is judged on the parsed command (high: rm -rf, sudo, curl | sh, "
        "writes outside the workspace…; medium: rm, mv, curl, git push…; low: the rest) and "
        "mapped to a policy: by default low runs at once, medium waits for approval, high "
        "waits for an operator's explicit authority.",
        "Every program in the command must be on the command allowlist.",
        "CPU time, memory (address space), file size and open files are capped per call.",
    ],
    permission=PermissionLevel.EXECUTE,
    risk=Risk.HIGH,
    tags=["shell", "execute"],
    category="execution",
    time_limit_s=600,
)


def command_policy(settings: Settings) -> CommandPolicy | None:
    """The allowlist from TOOLRUN_COMMAND_ALLOWLIST ("default" stands for the built-in list),
    or None when it is turned off."""
    from toolrun.sandbox.commands import DEFAULT_ALLOWLIST, CommandPolicy  # noqa: PLC0415

    names = settings.command_allowlist
    if names is None:
        return None
    extra = frozenset(names) - {"default"}
    return CommandPolicy(extra | DEFAULT_ALLOWLIST if "default" in names else extra)


def command_risk(command: str, ctx: ToolContext) -> tuple[Risk, str]:
    """A command line's risk and why, judged against `ctx.workspace`.

    Raises:
        SandboxViolation: the command allowlist refuses it.
    """
    from toolrun.permissions.risk import assess_command  # noqa: PLC0415 - see the docstring

    policy = command_policy(ctx.settings)
    if policy is not None:
        policy.check(command, ctx.workspace)
    assessment = assess_command(command, ctx.workspace)
    if policy is None and assessment.risk is Risk.LOW:
        # Without the allowlist any program may run: nothing is harmless by default.
        return Risk.MEDIUM, "risk medium: the command allowlist is off"
    return assessment.risk, assessment.summary


class BashTool(Tool):
    descriptor = DESCRIPTOR

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern:
        command = arguments["command"]
        risk, summary = command_risk(command, ctx)
        return Concern(risk, f"bash runs a shell command ({summary}): {command}")

    def max_time_limit_s(self, settings: Settings) -> float:
        return settings.bash_max_timeout_s

    def time_limit_s(self, arguments: dict[str, Any], settings: Settings) -> float:
        default = min(settings.bash_default_timeout_s, settings.bash_max_timeout_s)
        return float(arguments.get("timeout", default))

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        limit = ctx.settings.bash_max_timeout_s
        timeout = self.time_limit_s(arguments, ctx.settings)
        if timeout > limit:
            raise ToolExecutionError(f"timeout {timeout:g} s is above the maximum of {limit:g} s")
        return run_command_line(arguments["command"], timeout, ctx)


def run_command_line(
    command: str, timeout: float, ctx: ToolContext, cwd_fd: int | None = None
) -> ToolOutput:
    """Run `command` with bash in the sandbox (the allowlist checked again, the call's
    jail, limits, output capped), in the workspace or the directory `cwd_fd`.

    Raises:
        ToolTimeout: it ran out of time. ToolExecutionError: it failed (a signal, a
            non-zero exit); both carry the output.
    """
    settings = ctx.settings
    policy = command_policy(settings)
    if policy is not None:
        policy.check(command, ctx.workspace)
    sinks = [
        CappedLines(
            head=settings.output_head_lines,
            tail=settings.output_tail_lines,
            max_line_chars=settings.output_max_line_chars,
        )
        for _ in range(2)
    ]
    argv = [BASH, "--noprofile", "--norc", "-c", command]
    ended = ctx.runner.run(argv, timeout_s=timeout, stdout=sinks[0], stderr=sinks[1], cwd_fd=cwd_fd)
    output: dict[str, Any] = {
        "stdout": sinks[0].text(),
        "stderr": sinks[1].text(),
        "exit_code": ended.exit_code,
        "timed_out": ended.timed_out,
        "duration_s": round(ended.duration_s, 3),
    }
    if ctx.runner.jail is not None:
        refused = denials(output["stderr"], ctx.workspace.root)
        if refused:  # the jail's answers, for the agent and the security log
            output["jail_denied"] = [{"path": path, "error": why} for path, why in refused]
    if ended.timed_out:
        raise ToolTimeout(f"command timed out after {timeout:g} s", output=output)
    code = ended.exit_code
    if code is not None and code < 0:
        raise ToolExecutionError(
            f"command killed by signal {signal.Signals(-code).name}", output=output
        )
    if code:
        raise ToolExecutionError(f"command exited with code {code}", output=output)
    return ToolOutput(
        output=output,
        metadata={
            "stdout_lines": sinks[0].total_lines,
            "stdout_lines_omitted": sinks[0].omitted_lines,
        },
    )

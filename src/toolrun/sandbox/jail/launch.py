"""The jail as a command, for programs another library starts (an MCP stdio server):

    TOOLRUN_JAIL_PLAN=PLAN_JSON python -I -S launch.py -- COMMAND [ARG...]

runs COMMAND in the jail the plan describes, with the plan's environment and nothing
inherited. The plan travels in the environment, not on the command line: it may hold an
MCP server's token, and any user may read another's command line. Exit code 126 when
the jail cannot be made (the command never runs unconfined), 127 when the command cannot
be executed. `launch.py --zygote FD` is the
warm launcher (`zygote.py`) serving the socket FD.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":  # -I -S: only the standard library, and the package by path
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from toolrun.sandbox.jail.confine import JailError, enter
from toolrun.sandbox.jail.plan import JailPlan

CANNOT_ISOLATE = 126
CANNOT_EXEC = 127
SCRIPT = str(Path(__file__).resolve())
PLAN_VAR = "TOOLRUN_JAIL_PLAN"


def command_prefix() -> list[str]:
    """This script, run with the standard library only (-I -S)."""
    return [sys.executable, "-I", "-S", SCRIPT]


def command(plan: JailPlan, argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run `argv` in `plan`'s jail."""
    return [*command_prefix(), "--", *argv], {PLAN_VAR: plan.to_json()}


def main(args: list[str]) -> int:
    if args[:1] == ["--zygote"] and len(args) == 2:  # the warm launcher (jail/zygote.py)
        from toolrun.sandbox.jail import zygote  # noqa: PLC0415 - its mode only

        return zygote.main(int(args[1]))
    if len(args) < 2 or args[0] != "--" or PLAN_VAR not in os.environ:
        print(f"usage: {PLAN_VAR}=PLAN_JSON launch.py -- COMMAND [ARG...]", file=sys.stderr)
        return CANNOT_ISOLATE
    try:
        # Its own protocol, not configuration: the plan its starter put there.
        plan = JailPlan.from_json(os.environ[PLAN_VAR])
        enter(plan)
    except (ValueError, JailError) as exc:
        print(f"toolrun jail: {exc}", file=sys.stderr)
        return CANNOT_ISOLATE
    argv = args[1:]
    try:
        os.execvpe(argv[0], argv, plan.env or {})  # noqa: S606 - argv list, never a shell
    except OSError as exc:
        print(f"toolrun jail: cannot run {argv[0]}: {exc.strerror}", file=sys.stderr)
    return CANNOT_EXEC


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

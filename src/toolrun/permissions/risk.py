"""How risky a shell command is, judged on its parsed commands, with the reasons why."""

from __future__ import annotations

from dataclasses import dataclass

from toolrun.errors import SandboxViolation
from toolrun.permissions.policy import Risk
from toolrun.permissions.reach import WRITERS, places_outside
from toolrun.sandbox.commands import command_lines, simple_commands, writes_outside
from toolrun.sandbox.paths import Workspace

_FETCHERS = {"curl", "wget"}
_RUNS_STDIN = {"sh", "bash", "dash", "zsh", "python", "python3", "node", "perl", "ruby"}
_MEDIUM = {"rm", "mv", "cp", "chmod", "chown", "kill", "pkill", "curl", "wget", "scp", "rsync"}


@dataclass(frozen=True)
class Assessment:
    """A risk level and what led to it (empty for low)."""

    risk: Risk
    reasons: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        return f"risk {self.risk}" + (f": {'; '.join(self.reasons)}" if self.reasons else "")


def assess_command(source: str, workspace: Workspace) -> Assessment:
    """High for destructive or privilege-raising commands, medium for ones that change or
    reach out, low otherwise. A command that cannot be parsed is high.
    """
    try:
        commands = simple_commands(source)
        lines = list(command_lines(commands))
    except SandboxViolation:
        return Assessment(Risk.HIGH, ("the command cannot be parsed",))
    high = [reason for words in lines if (reason := _high(words))]
    high += [
        f"changes a file outside the workspace: {path}"
        for words in lines
        for path in _written_paths(words)
        if _outside(path, workspace)
    ]
    names = {words[0] for words in lines}
    if names & _FETCHERS and any(w[0] in _RUNS_STDIN and len(w) == 1 for w in lines):
        high.append("downloads code and runs it")
    redirects = [redirect for command in commands for redirect in command.redirects]
    high += [
        f"writes outside the workspace: {t}"
        for op, t, _ in redirects
        if writes_outside(op, t, workspace)
    ]
    high += [
        f"may work outside the workspace: {place}"
        for place in places_outside(commands, lines, workspace)
    ]
    if high:
        return Assessment(Risk.HIGH, tuple(dict.fromkeys(high)))
    medium = [reason for words in lines if (reason := _medium(words))]
    if medium:
        return Assessment(Risk.MEDIUM, tuple(dict.fromkeys(medium)))
    return Assessment(Risk.LOW)


def _written_paths(words: list[str]) -> list[str]:
    """The operands a file-changing command writes (`sort -o FILE` included)."""
    name, args = words[0], words[1:]
    if name == "sort":
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"] + [
            a.removeprefix("--output=") for a in args if a.startswith("--output=")
        ]
    if name not in WRITERS:
        return []
    return [a for a in args if not a.startswith("-")]


def _outside(path: str, workspace: Workspace) -> bool:
    try:
        workspace.resolve(path)
    except SandboxViolation:
        return True
    return False


def _flags(args: list[str]) -> set[str]:
    """Single-letter flags, combined ones split (-rf → r, f), plus long options."""
    found: set[str] = set()
    for arg in args:
        if arg.startswith("--"):
            found.add(arg)
        elif arg.startswith("-") and len(arg) > 1:
            found.update(arg[1:])
    return found


def _high(words: list[str]) -> str | None:
    name, args = words[0], words[1:]
    flags = _flags(args)
    if name in {"sudo", "su", "doas"}:
        return f"{name} raises privileges"
    if name == "rm" and flags & {"r", "R", "--recursive"} and flags & {"f", "--force"}:
        return "rm -rf deletes trees without asking"
    if (
        name == "chmod"
        and flags & {"R", "--recursive"}
        and any(a in {"777", "a+rwx"} for a in args)
    ):
        return "chmod -R 777 opens every file to everyone"
    if name.startswith("mkfs"):
        return f"{name} formats a device"
    if name == "dd" and any(a.startswith("of=/dev/") for a in args):
        return "dd writes straight to a device"
    if name == "git" and "push" in args and flags & {"f", "--force", "--force-with-lease"}:
        return "git push --force rewrites shared history"
    return None


def _medium(words: list[str]) -> str | None:
    name, args = words[0], words[1:]
    if name in _MEDIUM:
        return f"{name} changes files, processes or reaches the network"
    if name == "git" and args[:1] and args[0] in {"push", "reset", "clean", "rebase"}:
        return f"git {args[0]} changes history or the work tree"
    if name in {"pip", "npm", "cargo"} and "install" in args:
        return f"{name} install runs third-party code"
    return None

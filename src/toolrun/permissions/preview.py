"""What a parked call would do, for the person who approves it: a write's or an edit's
change to the file as it is now (a unified diff), a bash line's working directory and the
commands it runs. Other tools have none: their arguments say it."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from toolrun.errors import SandboxViolation, ToolExecutionError, ToolrunError
from toolrun.sandbox.commands import command_lines, simple_commands
from toolrun.sandbox.fs import open_file
from toolrun.sandbox.paths import Workspace

MAX_FILE_BYTES = 512 * 1024  # a larger file is not diffed (the page shows the arguments)


def preview(tool_name: str, arguments: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
    """`{"kind": "diff" | "command" | "none", …}` for a call of `tool_name`."""
    if tool_name == "bash":
        return _command(str(arguments.get("command", "")), workspace)
    if tool_name in ("write", "edit"):
        return _diff(tool_name, arguments, workspace)
    return {"kind": "none"}


def _command(line: str, workspace: Workspace) -> dict[str, Any]:
    try:
        commands = list(command_lines(simple_commands(line)))
        problem = None
    except SandboxViolation as exc:
        commands, problem = [], str(exc)
    return {
        "kind": "command",
        "working_directory": str(workspace.root),
        "commands": commands,
        "problem": problem,
    }


def _diff(tool_name: str, arguments: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
    path = str(arguments.get("file_path", ""))
    try:
        resolved = workspace.resolve(path)
    except SandboxViolation as exc:
        return {"kind": "diff", "path": path, "diff": None, "problem": str(exc)}
    shown = workspace.display(resolved)
    before = ""
    exists = resolved.exists() or resolved.is_symlink()
    if exists:
        try:
            before = _current(workspace, resolved)
        except (ToolrunError, OSError) as exc:
            return {"kind": "diff", "path": shown, "diff": None, "problem": str(exc)}
    elif tool_name == "edit":
        return {"kind": "diff", "path": shown, "diff": None, "problem": "no such file"}
    after, problem = _after(tool_name, arguments, before)
    if after is None:
        return {"kind": "diff", "path": shown, "diff": None, "problem": problem}
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{shown}" if exists else "/dev/null",
        tofile=f"b/{shown}",
    )
    return {"kind": "diff", "path": shown, "diff": "".join(lines), "problem": None}


def _current(workspace: Workspace, resolved: Path) -> str:
    """The file's text now, opened once below the workspace's root without following a
    link (a path swapped for one after the check is refused) and read to at most
    MAX_FILE_BYTES; a FIFO, a device or a directory is refused, never read.

    Raises:
        ToolrunError: not a regular file, swapped for a link, or over the size.
    """
    fd, info = open_file(workspace, resolved)
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_FILE_BYTES:
            raise ToolExecutionError(f"the file is over {MAX_FILE_BYTES // 1024} KiB: not diffed")
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # it grew since fstat
        raise ToolExecutionError(f"the file is over {MAX_FILE_BYTES // 1024} KiB: not diffed")
    return data.decode("utf-8", errors="replace")


def _after(tool_name: str, arguments: dict[str, Any], before: str) -> tuple[str | None, str]:
    """The file's text once the call ran, or None and why it cannot be known now."""
    if tool_name == "write":
        return str(arguments.get("content", "")), ""
    old, new = str(arguments.get("old_string", "")), str(arguments.get("new_string", ""))
    found = before.count(old) if old else 0
    if found == 0:
        return None, "old_string is not in the file now: the edit would fail"
    if found > 1 and not arguments.get("replace_all"):
        return None, f"old_string is in the file {found} times: the edit would fail"
    return before.replace(old, new, -1 if arguments.get("replace_all") else 1), ""

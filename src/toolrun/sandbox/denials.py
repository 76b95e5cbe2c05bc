"""What a jailed command was refused, read from what it said: the jail's answers reach
the command as errors (a path that is not there, read-only, not permitted), which the
security log records as attempts to leave the workspace."""

from __future__ import annotations

import re
from pathlib import Path

MAX_DENIALS = 5
_WHY = (
    r"(?P<why>Permission denied|Read-only file system|Operation not permitted"
    r"|No such file or directory)"
)
_PATH = r"(?P<path>/[^\s:'\"`]*)"
_REFUSED = (  # "cat: /x: Permission denied", and Python's "...denied: '/x'"
    re.compile(_PATH + r"['\"`]?\s*:?\s*.*?" + _WHY),
    re.compile(_WHY + r":\s*['\"]" + _PATH),
)


def denials(stderr: str, workspace: Path) -> list[tuple[str, str]]:
    """(path, error) for each absolute path outside `workspace` that the command was
    refused, at most MAX_DENIALS, in the order said."""
    found: list[tuple[str, str]] = []
    for line in stderr.splitlines():
        match = _REFUSED[1].search(line) or _REFUSED[0].search(line)
        if match is None:
            continue
        path = match["path"].rstrip(".,;)")
        if len(path) < 2 or Path(path).is_relative_to(workspace):
            continue
        if (path, match["why"]) not in found:
            found.append((path, match["why"]))
        if len(found) == MAX_DENIALS:
            break
    return found

"""Test helper: a comparable picture of a directory tree, links not followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def snapshot(base: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry under `base` (links not followed): kind, content or link target, mode."""
    state: dict[str, tuple[str, bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entry = ("link", os.fsencode(os.readlink(path)), 0)
            elif stat.S_ISDIR(info.st_mode):
                entry = ("dir", b"", stat.S_IMODE(info.st_mode))
            else:
                entry = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
            state[str(path.relative_to(base))] = entry
    return state

"""The embedded platform's admin token: created on first start, kept in a 0600 file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

ADMIN_NAME = "admin"


def ensure_admin_token(store: AgentStore, path: Path) -> bool:
    """Make sure `path` holds a working admin token; True when a new one was written."""
    with contextlib.suppress(OSError):
        if store.authenticate(path.read_text().strip()) is not None:
            return False
    if store.get(ADMIN_NAME) is None:
        _profile, token = store.create(ADMIN_NAME, ceiling=PermissionLevel.ADMIN, role=Role.ADMIN)
    else:
        token = store.rotate(ADMIN_NAME)
    _write_private(path, token)
    return True


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` readable by the owner only, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text + "\n")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise

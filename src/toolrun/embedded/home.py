"""The platform's home holds what tools returned (Redis's append-only file, the history
database) and the admin token: only its owner may read any of it."""

from __future__ import annotations

import contextlib
from pathlib import Path


def secure_home(home: Path) -> None:
    """Make `home` (0700) if it is missing, and repair an existing one: the home and the
    directories in it 0700, its files readable and writable by their owner only."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    home.chmod(0o700)
    for path in home.rglob("*"):
        with contextlib.suppress(FileNotFoundError):  # a file gone meanwhile (a lock)
            if path.is_symlink():
                continue
            mode = path.stat().st_mode & 0o777
            if path.is_dir():
                path.chmod(0o700)
            elif path.is_file() and mode & 0o077:
                path.chmod(mode & 0o700 | 0o600)

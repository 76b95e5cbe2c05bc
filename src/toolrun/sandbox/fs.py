"""File access that cannot be redirected by a symlink swapped in after the path check.

`Workspace.resolve` gives a real path inside the root. These helpers then walk that path
from the root one component at a time with O_NOFOLLOW, so a directory replaced by a link
between the check and the use makes the call fail instead of escaping.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from toolrun.errors import SandboxViolation, ToolExecutionError
from toolrun.sandbox.paths import Workspace

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR}


def _swapped(path: Path) -> SandboxViolation:
    return SandboxViolation(f"path changed to a symlink while in use: {path}")


@contextlib.contextmanager
def _open_parent(workspace: Workspace, path: Path, *, create: bool) -> Iterator[int]:
    """Yield a directory fd for `path`'s parent, reached from the root without following links."""
    parts = workspace.relative(path).parts[:-1]
    fd = os.open(workspace.root, _DIR_FLAGS)
    try:
        for name in parts:
            try:
                next_fd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o777, dir_fd=fd)
                next_fd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _LINK_ERRNOS:
                    raise _swapped(path) from exc
                raise
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


def _directory(workspace: Workspace, path: Path) -> ToolExecutionError:
    return ToolExecutionError(f"{workspace.display(path)} is a directory, not a file")


def read_bytes(workspace: Workspace, path: Path) -> tuple[bytes, os.stat_result]:
    """Read a regular file inside the workspace; returns its bytes and its stat.

    Raises:
        ToolExecutionError: missing file, a directory, or not a regular file.
        SandboxViolation: a component turned into a symlink after resolution.
    """
    if path == workspace.root:
        raise _directory(workspace, path)
    try:
        with _open_parent(workspace, path, create=False) as parent:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except FileNotFoundError as exc:
        raise ToolExecutionError(f"file not found: {workspace.display(path)}") from exc
    except IsADirectoryError as exc:
        raise _directory(workspace, path) from exc
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise _swapped(path) from exc
        raise ToolExecutionError(f"cannot open {workspace.display(path)}: {exc.strerror}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _directory(workspace, path)
        raise ToolExecutionError(f"{workspace.display(path)} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), info


def write_bytes_atomic(workspace: Workspace, path: Path, data: bytes) -> bool:
    """Write `data` to `path` atomically (temp file + rename in the same directory).

    Missing parent directories are created. The rename replaces a link at `path` rather
    than writing through it. Returns True when the file was created, False when replaced.

    Raises:
        ToolExecutionError: the target is a directory or the write fails.
        SandboxViolation: a component turned into a symlink after resolution.
    """
    if path == workspace.root:
        raise _directory(workspace, path)
    with _open_parent(workspace, path, create=True) as parent:
        existing = _lstat_at(parent, path.name)
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise _directory(workspace, path)
        mode = existing.st_mode & 0o7777 if existing is not None else 0o644
        temp = f".{path.name}.toolrun-{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(temp, flags, mode, dir_fd=parent)
        except OSError as exc:
            raise ToolExecutionError(
                f"cannot write {workspace.display(path)}: {exc.strerror}"
            ) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent)
            if isinstance(exc, OSError):
                message = f"cannot write {workspace.display(path)}: {exc.strerror}"
                raise ToolExecutionError(message) from exc
            raise
        return existing is None


def _lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None

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

from toolrun.errors import SandboxViolation, ToolExecutionError, ToolrunError
from toolrun.sandbox.paths import Workspace

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO with no writer must not hang; it is refused just after.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR}
NEW_FILE_MODE = 0o644


def _open_at(workspace: Workspace, path: Path, dir_fd: int, name: str, flags: int) -> int:
    """Open `name` under `dir_fd` without following a link; tell a swapped link from a file."""
    try:
        return os.open(name, flags, NEW_FILE_MODE, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in _LINK_ERRNOS:
            raise
        entry = _lstat_at(dir_fd, name)
        if entry is not None and stat.S_ISLNK(entry.st_mode):
            raise SandboxViolation(
                f"path changed to a symlink while in use: {workspace.display(path)}"
            ) from exc
        raise ToolExecutionError(
            f"{workspace.display(path)}: a component of the path is not a directory"
        ) from exc


@contextlib.contextmanager
def _walk(
    workspace: Workspace, path: Path, parts: tuple[str, ...], *, create: bool
) -> Iterator[int]:
    """Yield a directory fd reached from the root through `parts`, never through a link."""
    fd = os.open(workspace.root, _DIR_FLAGS)
    try:
        for name in parts:
            if create and _lstat_at(fd, name) is None:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
            next_fd = _open_at(workspace, path, fd, name, _DIR_FLAGS)
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


def make_directory(workspace: Workspace, path: Path) -> None:
    """Create `path` and its missing parents inside the workspace, never through a link
    (`mkdir -p` that a link swapped in on the way cannot redirect).

    Raises:
        SandboxViolation: a component of the path is a symbolic link.
        ToolExecutionError: a component is not a directory.
    """
    workspace.check_writable(path)
    with _walk(workspace, path, workspace.relative(path).parts, create=True):
        pass


@contextlib.contextmanager
def open_directory(workspace: Workspace, path: Path) -> Iterator[int]:
    """Yield an fd of the directory `path`, reached without following links.

    Raises:
        ToolExecutionError: missing, or not a directory.
        SandboxViolation: a component turned into a symlink after resolution.
    """
    try:
        with _walk(workspace, path, workspace.relative(path).parts, create=False) as fd:
            yield fd
    except FileNotFoundError as exc:
        raise ToolExecutionError(f"directory not found: {workspace.display(path)}") from exc


def open_file(workspace: Workspace, path: Path) -> tuple[int, os.stat_result]:
    """Open a regular file for reading without following links; the caller closes the fd.

    Raises:
        ToolExecutionError: missing file, a directory, or not a regular file.
        SandboxViolation: a component turned into a symlink after resolution.
    """
    if path == workspace.root:
        raise _directory(workspace, path)
    try:
        with _walk(workspace, path, workspace.relative(path).parts[:-1], create=False) as parent:
            fd = _open_at(workspace, path, parent, path.name, _READ_FLAGS)
    except FileNotFoundError as exc:
        raise ToolExecutionError(f"file not found: {workspace.display(path)}") from exc
    except ToolrunError:
        raise
    except OSError as exc:
        raise ToolExecutionError(f"cannot open {workspace.display(path)}: {exc.strerror}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _directory(workspace, path)
        raise ToolExecutionError(f"{workspace.display(path)} is not a regular file")
    os.set_blocking(fd, True)
    return fd, info


def read_bytes(workspace: Workspace, path: Path) -> tuple[bytes, os.stat_result]:
    """Read a regular file inside the workspace; returns its bytes and its stat."""
    fd, info = open_file(workspace, path)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), info


def write_bytes_atomic(workspace: Workspace, path: Path, data: bytes) -> bool:
    """Write `data` to `path` atomically (temp file + rename in the same directory).

    Missing parent directories are created. The rename replaces a link at `path` rather
    than writing through it; a replaced regular file keeps its permission bits.
    Returns True when the file was created, False when replaced.

    Raises:
        ToolExecutionError: the target is a directory or the write fails.
        SandboxViolation: a component turned into a symlink after resolution.
    """
    if path == workspace.root:
        raise _directory(workspace, path)
    workspace.check_writable(path)
    parts = workspace.relative(path).parts[:-1]
    try:
        with _walk(workspace, path, parts, create=True) as parent:
            return _replace(workspace, path, parent, data)
    except ToolrunError:
        raise
    except OSError as exc:
        raise ToolExecutionError(f"cannot write {workspace.display(path)}: {exc.strerror}") from exc


def _replace(workspace: Workspace, path: Path, parent: int, data: bytes) -> bool:
    existing = _lstat_at(parent, path.name)
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise _directory(workspace, path)
    keep_mode = existing is not None and stat.S_ISREG(existing.st_mode)
    temp = f".{path.name}.toolrun-{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, _WRITE_FLAGS, NEW_FILE_MODE, dir_fd=parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if keep_mode and existing is not None:
                os.fchmod(handle.fileno(), stat.S_IMODE(existing.st_mode))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=parent)
        raise
    return existing is None


def _directory(workspace: Workspace, path: Path) -> ToolExecutionError:
    return ToolExecutionError(f"{workspace.display(path)} is a directory, not a file")


def _lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None

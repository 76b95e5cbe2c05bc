"""The pack's file access: paths below a real directory of the workspace, refused when
they leave it or pass through a symbolic link, and read, written and locked only with the
sandbox's no-follow helpers (`toolrun.sandbox.fs`): an agent that plants a link where the
pack keeps a document, a record file, a temporary file or a lock gets a refusal, never a
file outside."""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import SandboxViolation, ToolExecutionError
from toolrun.sandbox.fs import (
    NEW_FILE_MODE,
    make_directory,
    open_directory,
    read_bytes,
    write_bytes_atomic,
)
from toolrun.sandbox.paths import Workspace

_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def linked(workspace: Workspace, path: Path) -> SandboxViolation:
    return SandboxViolation(
        f"{workspace.display(path)} is a symbolic link: the workflow tools never follow links"
    )


@dataclass(frozen=True)
class Folder:
    """A directory of the workspace reached through no link, and the files below it."""

    workspace: Workspace
    root: Path

    @classmethod
    def top(cls, workspace: Workspace) -> Folder:
        """The workspace's root (real already: `Workspace` resolves it)."""
        return cls(workspace, workspace.root)

    def path(self, relative: str) -> Path:
        """`relative` below this folder (an absolute path must already be inside it).

        Raises:
            SandboxViolation: it leaves the folder, or it or a directory on the way is a
                symbolic link.
        """
        if "\x00" in relative:
            raise SandboxViolation("path is outside the workspace (NUL byte in path)")
        lexical = Path(os.path.normpath(self.root / relative))
        if not lexical.is_relative_to(self.root):
            raise SandboxViolation(f"path is outside {self.display()}: {relative}")
        current = self.root
        for part in lexical.relative_to(self.root).parts:
            current = current / part
            try:
                is_link = current.is_symlink()
            except OSError as exc:  # e.g. a name too long
                raise ToolExecutionError(f"cannot use {relative}: {exc.strerror}") from exc
            if is_link:
                raise linked(self.workspace, current)
        return lexical

    def display(self, path: Path | None = None) -> str:
        """How a path is shown: relative to the workspace root."""
        return self.workspace.display(self.root if path is None else path)

    def folder(self, relative: str) -> Folder:
        """The directory `relative` below this one, made if missing.

        Raises:
            SandboxViolation: see `path`. ToolExecutionError: it is a file.
        """
        path = self.path(relative)
        make_directory(self.workspace, path)  # through no link, even one swapped in now
        return Folder(self.workspace, path)

    def read_text(self, relative: str) -> str | None:
        """The UTF-8 text of a file below this folder, None when there is none.

        Raises:
            SandboxViolation: see `path`. ToolExecutionError: not a readable text file.
        """
        path = self.path(relative)
        if not os.path.lexists(path):
            return None
        data, _ = read_bytes(self.workspace, path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolExecutionError(f"{self.display(path)} is not UTF-8 text: {exc}") from exc

    def write_text(self, relative: str, text: str) -> None:
        """Replace a file below this folder atomically (a temporary file of a unique name
        in the same directory, then a rename): never half-written, never through a link.

        Raises:
            SandboxViolation: see `path`. ToolExecutionError: the write failed.
        """
        write_bytes_atomic(self.workspace, self.path(relative), text.encode("utf-8"))

    @contextmanager
    def locked(self, relative: str) -> Iterator[None]:
        """Hold an exclusive lock on the file `relative` (made if missing, never truncated,
        never through a link) while the block runs.

        Raises:
            SandboxViolation: see `path`, or the lock file is a link.
        """
        path = self.path(relative)
        self.folder(str(path.parent))  # made if missing
        with open_directory(self.workspace, path.parent) as parent:
            try:
                fd = os.open(path.name, _LOCK_FLAGS, NEW_FILE_MODE, dir_fd=parent)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise linked(self.workspace, path) from exc
                raise ToolExecutionError(f"cannot lock {self.display(path)}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

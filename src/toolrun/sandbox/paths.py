"""Workspace confinement: every user path is resolved, symlinks included, inside one root."""

from __future__ import annotations

import os
from pathlib import Path

from toolrun.errors import SandboxViolation

OUTSIDE = "path is outside the workspace"


class Workspace:
    """A directory that tool paths may not leave; `protected` directories in it (the
    platform's own code) are read-only to tools."""

    def __init__(self, root: Path | str, protected: tuple[Path, ...] = ()) -> None:
        resolved = Path(root).resolve(strict=False)
        if not resolved.is_dir():
            raise SandboxViolation(f"workspace is not a directory: {root}")
        self.root = resolved
        self.protected = tuple(path for path in protected if path.is_relative_to(resolved))

    def check_writable(self, resolved: Path) -> None:
        """Raises: SandboxViolation: `resolved` lies in a protected directory."""
        for path in self.protected:
            if resolved.is_relative_to(path):
                raise SandboxViolation(
                    f"{self.display(resolved)} is part of the platform's own code, which "
                    "tools may read but not change"
                )

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, path: object) -> Path:
        """Return the real absolute path for `path`, refusing anything that ends up outside.

        Relative paths are taken from the root; absolute ones must already be inside it.
        Every existing component is resolved (link chains and dangling links included), so
        a link inside the workspace that points out is refused like a plain `..` escape.

        Raises:
            SandboxViolation: non-string, empty, NUL-containing or escaping paths.
        """
        if not isinstance(path, str):
            raise SandboxViolation(f"{OUTSIDE} (path must be a string, got {type(path).__name__})")
        if not path.strip():
            raise SandboxViolation(f"{OUTSIDE} (empty path)")
        if "\x00" in path:
            raise SandboxViolation(f"{OUTSIDE} (NUL byte in path)")
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            resolved = candidate.resolve(strict=False)
        except (RuntimeError, OSError) as exc:  # 3.11 raises RuntimeError on a link loop
            raise SandboxViolation(f"{OUTSIDE} (symlink loop or unreadable path): {path}") from exc
        if not resolved.is_relative_to(self.root):
            raise SandboxViolation(f"{OUTSIDE}: {path}{self._link_note(candidate)}")
        return resolved

    def _link_note(self, candidate: Path) -> str:
        """Where the first symlink inside the workspace on `candidate`'s way points, as
        its own text says (what `ls -l` shows the agent too; nothing more of the host)."""
        if not candidate.is_relative_to(self.root):
            return ""
        walked = self.root
        for part in candidate.relative_to(self.root).parts:
            walked = walked / part
            if part == "..":
                return ""  # left by name, not through a link
            if walked.is_symlink():
                shown = walked.relative_to(self.root)
                return f" ({shown} is a symlink to {os.readlink(walked)})"
        return ""

    def relative(self, resolved: Path) -> Path:
        """`resolved` (already inside) relative to the root."""
        return resolved.relative_to(self.root)

    def display(self, resolved: Path) -> str:
        """How a path is shown to agents: relative to the root, '.' for the root itself."""
        return str(self.relative(resolved)) or "."

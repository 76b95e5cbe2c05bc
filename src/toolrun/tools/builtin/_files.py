"""File access shared by read, write and edit: confined I/O plus staleness stamps."""

from __future__ import annotations

import os
from pathlib import Path

from toolrun.errors import ToolExecutionError
from toolrun.sandbox.fs import read_bytes, write_bytes_atomic
from toolrun.tools.base import FileStamp, ToolContext
from toolrun.tools.builtin._text import TextFile, decode


def load_text(ctx: ToolContext, path: Path) -> tuple[TextFile, os.stat_result, int]:
    """Decode the file at `path`; returns it, its stat and its size in bytes."""
    data, info = read_bytes(ctx.workspace, path)
    return decode(data, ctx.workspace.display(path)), info, len(data)


def remember(ctx: ToolContext, path: Path, info: os.stat_result) -> None:
    """Record what the agent has now seen of `path`."""
    ctx.file_stamps[path] = FileStamp(info.st_mtime_ns, info.st_size)


def ensure_unchanged(ctx: ToolContext, path: Path, info: os.stat_result) -> None:
    """Refuse to modify a file that changed since this session last read or wrote it.

    Raises:
        ToolExecutionError: the file's mtime or size differ from the remembered ones.
    """
    seen = ctx.file_stamps.get(path)
    if seen is not None and seen != FileStamp(info.st_mtime_ns, info.st_size):
        raise ToolExecutionError(
            f"{ctx.workspace.display(path)} changed since it was last read; read it again first"
        )


def store_text(
    ctx: ToolContext, path: Path, like: TextFile, normalized_text: str
) -> tuple[int, bool]:
    """Write text atomically in `like`'s encoding and line endings.

    Returns the bytes written and whether the file was created.
    """
    data = like.encode(normalized_text)
    created = write_bytes_atomic(ctx.workspace, path, data)
    remember(ctx, path, os.stat(path))
    return len(data), created

"""A hook around each start of a tool's process, for whoever watches them (the worker's
traces: `monitoring.tracing` sets it); none by default, and then it costs nothing."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

# Given the program's name (never its arguments), a context around its start.
ProcessWatch = Callable[[str], AbstractContextManager[object]]
_UNWATCHED: AbstractContextManager[object] = nullcontext()
_watch: ProcessWatch | None = None


def watch_process_starts(watch: ProcessWatch | None) -> None:
    """Have every process start of this process's runners go through `watch` (None: stop)."""
    global _watch  # noqa: PLW0603 - one watcher per process, set at its start
    _watch = watch


def watched(program: str) -> AbstractContextManager[object]:
    """The context a start of `program` runs in."""
    return _UNWATCHED if _watch is None else _watch(program)

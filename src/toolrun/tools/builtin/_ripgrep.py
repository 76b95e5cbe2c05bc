"""Running the bundled ripgrep binary through the sandbox runner."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolrun.errors import ToolExecutionError
from toolrun.sandbox.output import BoundedBytes
from toolrun.tools.base import ToolContext

MAX_OUTPUT_BYTES = 256 * 1024 * 1024
COMMON_FLAGS = ("--no-config", "--no-require-git", "--color=never")


@dataclass(frozen=True)
class RipgrepRun:
    """What rg printed (whole lines, no final newline) and how it ended."""

    text: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    truncated: bool


@cache
def _find_rg(configured: Path | None) -> str:
    if configured is not None:
        return str(configured)
    beside_python = Path(sys.executable).parent / "rg"
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which("rg")
    if found is None:
        raise ToolExecutionError("ripgrep (rg) is not installed; install the 'ripgrep' package")
    return found


def split_lines(text: str) -> list[str]:
    return text.split("\n") if text else []


def rename_paths(text: str, old: str, new: str) -> str:
    """Replace the path prefix `old` with `new` at the start of every line."""
    if not text or old == new:
        return text
    if not old:
        return new + text.replace("\n", "\n" + new)
    return ("\n" + text).replace("\n" + old, "\n" + new)[1:]


def run_rg(
    ctx: ToolContext,
    args: list[str],
    *,
    timeout_s: float,
    cwd_fd: int | None = None,
    pass_fds: tuple[int, ...] = (),
) -> RipgrepRun:
    """Run rg with `args` (in `cwd_fd`, else the workspace root); lines decoded leniently.

    Without a path argument rg searches its working directory (stdin is /dev/null, which rg
    does not read) and prints paths relative to it, with no "./" to strip.
    """
    stdout = BoundedBytes(MAX_OUTPUT_BYTES)
    stderr = BoundedBytes(64 * 1024)
    result = ctx.runner.run(
        [_find_rg(ctx.settings.rg_path), *COMMON_FLAGS, *args],
        timeout_s=timeout_s,
        stdout=stdout,
        stderr=stderr,
        cwd_fd=cwd_fd,
        pass_fds=pass_fds,
    )
    data = stdout.data()
    end = len(data)
    if result.timed_out or stdout.truncated:
        end = data.rfind(b"\n") + 1  # the last line may have been cut mid-way
    if end and data[end - 1] == ord("\n"):
        end -= 1
    return RipgrepRun(
        # Decoded through a memoryview: slicing tens of MB of bytes first would copy them.
        text=str(memoryview(data)[:end], "utf-8", "replace"),
        stderr=stderr.data().decode("utf-8", errors="replace").strip(),
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        truncated=stdout.truncated,
    )

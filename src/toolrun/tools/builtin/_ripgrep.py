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
    """What rg printed and how it ended."""

    lines: list[str]
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


def run_rg(
    ctx: ToolContext,
    args: list[str],
    *,
    timeout_s: float,
    cwd_fd: int | None = None,
    pass_fds: tuple[int, ...] = (),
) -> RipgrepRun:
    """Run rg with `args` (in `cwd_fd`, else the workspace root); lines decoded leniently."""
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
    text = stdout.data().decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if (result.timed_out or stdout.truncated) and lines:
        lines.pop()  # the last line may have been cut mid-way
    return RipgrepRun(
        lines=lines,
        stderr=stderr.data().decode("utf-8", errors="replace").strip(),
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        truncated=stdout.truncated,
    )

"""Runs a script of bench/ in a process of its own, from the repository's root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python bench/<script> ARGS…`, its output captured as text; never raises on exit."""
    return subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )

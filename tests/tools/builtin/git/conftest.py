"""Real repositories in the workspace, made with the git command line."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolrun.tools import ToolResult, ToolStatus

Git = Callable[..., str]
GIT = shutil.which("git") or "git"
_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Alice",
    "GIT_AUTHOR_EMAIL": "alice@example.com",
    "GIT_COMMITTER_NAME": "Alice",
    "GIT_COMMITTER_EMAIL": "alice@example.com",
}


def ok(result: ToolResult) -> dict[str, Any]:
    """The output of a call that must have succeeded."""
    assert result.status is ToolStatus.SUCCESS, result.error
    output: dict[str, Any] = result.output
    return output


def run_git(where: Path, *args: str) -> str:
    done = subprocess.run(
        [GIT, *args], cwd=where, env=_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def git(workspace: Path) -> Git:
    """`git("commit", ...)` in a fresh repository at the workspace root (branch main)."""
    run_git(workspace, "init", "-q", "-b", "main")
    return lambda *args: run_git(workspace, *args)


@pytest.fixture
def history(workspace: Path, git: Git) -> Path:
    """Two commits: app.py created, then changed; README.md in the first."""
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    (workspace / "README.md").write_text("# Demo\n")
    git("add", ".")
    git("commit", "-q", "-m", "Add the app")
    (workspace / "app.py").write_text("def main():\n    return 2\n")
    git("commit", "-q", "-am", "Return two", "--author", "Bob <bob@example.com>")
    return workspace

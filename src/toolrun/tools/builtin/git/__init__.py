"""Git over a repository in the workspace, one tool per permission level's operations."""

from __future__ import annotations

from toolrun.tools.base import Tool
from toolrun.tools.builtin.git.admin import GitCleanTool, GitPushTool, GitResetTool
from toolrun.tools.builtin.git.read import (
    GitBlameTool,
    GitBranchesTool,
    GitDiffTool,
    GitLogTool,
    GitShowTool,
    GitStatusTool,
)
from toolrun.tools.builtin.git.write import (
    GitAddTool,
    GitBranchCreateTool,
    GitCommitTool,
    GitStashTool,
    GitSwitchTool,
)

__all__ = ["git_tools"]


def git_tools() -> list[Tool]:
    """A fresh instance of each git tool."""
    return [
        GitStatusTool(),
        GitDiffTool(),
        GitLogTool(),
        GitShowTool(),
        GitBlameTool(),
        GitBranchesTool(),
        GitAddTool(),
        GitCommitTool(),
        GitBranchCreateTool(),
        GitSwitchTool(),
        GitStashTool(),
        GitResetTool(),
        GitCleanTool(),
        GitPushTool(),
    ]

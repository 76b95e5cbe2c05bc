"""The built-in tools, registered in every registry."""

from __future__ import annotations

from toolrun.tools.base import Tool
from toolrun.tools.builtin.bash import BashTool
from toolrun.tools.builtin.edit import EditTool
from toolrun.tools.builtin.git import git_tools
from toolrun.tools.builtin.glob import GlobTool
from toolrun.tools.builtin.grep import GrepTool
from toolrun.tools.builtin.http_fetch import HttpFetchTool
from toolrun.tools.builtin.lsp import LspTool
from toolrun.tools.builtin.read import ReadTool
from toolrun.tools.builtin.search import SearchTool
from toolrun.tools.builtin.task import TaskTool
from toolrun.tools.builtin.terminal import TerminalTool
from toolrun.tools.builtin.write import WriteTool

__all__ = ["builtin_tools"]


def builtin_tools() -> list[Tool]:
    """A fresh instance of each built-in tool."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        GlobTool(),
        GrepTool(),
        BashTool(),
        HttpFetchTool(),
        SearchTool(),
        LspTool(),
        TerminalTool(),
        TaskTool(),
        *git_tools(),
    ]

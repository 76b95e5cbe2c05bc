"""grep: regex search over workspace files with ripgrep, in three output modes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.fs import open_directory, open_file
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin._ripgrep import RipgrepRun, rename_paths, run_rg, split_lines
from toolrun.tools.model import ToolDescriptor, ToolExample

MODES = ("files_with_matches", "content", "count")
MAX_COLUMNS = 500
NO_FILES_SEARCHED = "No files were searched"
_CONTEXT = {"type": "integer", "minimum": 0, "maximum": 1000}

DESCRIPTOR = ToolDescriptor.builtin(
    name="grep",
    version="1.0.0",
    description=(
        "Search file contents with a regular expression (ripgrep syntax). "
        "`files_with_matches` lists matching files, `content` shows matching lines as "
        "`path:line:text` (with -A/-B/-C context), `count` gives matches per file. "
        "Honours .gitignore; filter with `glob` or `type`; page with `offset` and `head_limit`."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Regular expression."},
            "path": {"type": "string", "description": "File or directory (default: workspace)."},
            "glob": {
                "type": "string",
                "description": "Only files matching this glob, e.g. `*.py`.",
            },
            "type": {"type": "string", "description": "Only files of this rg type, e.g. `py`."},
            "output_mode": {"type": "string", "enum": list(MODES), "default": "files_with_matches"},
            "-A": {**_CONTEXT, "description": "Lines of context after each match (content)."},
            "-B": {**_CONTEXT, "description": "Lines of context before each match (content)."},
            "-C": {**_CONTEXT, "description": "Lines of context around each match (content)."},
            "-i": {"type": "boolean", "default": False, "description": "Ignore case."},
            "-n": {"type": "boolean", "default": True, "description": "Line numbers (content)."},
            "multiline": {
                "type": "boolean",
                "default": False,
                "description": "Let patterns span lines (`.` matches newlines).",
            },
            "head_limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Most entries returned.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Entries skipped.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": list(MODES)},
            "files": {"type": "array", "items": {"type": "string"}},
            "content": {"type": "string"},
            "counts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "count": {"type": "integer"}},
                },
            },
            "returned": {
                "type": "integer",
                "description": "Entries (files, lines, counts) returned.",
            },
            "total": {"type": "integer", "description": "Entries before offset/head_limit."},
            "truncated": {"type": "boolean"},
            "warnings": {"type": ["string", "null"]},
        },
    },
    examples=[
        ToolExample(
            description="Find the files that define a class", arguments={"pattern": r"^class \w+"}
        ),
        ToolExample(
            description="Show TODO lines in Python files with two lines of context",
            arguments={"pattern": "TODO", "type": "py", "output_mode": "content", "-C": 2},
        ),
        ToolExample(
            description="Count case-insensitive 'error' per log file",
            arguments={"pattern": "error", "glob": "*.log", "output_mode": "count", "-i": True},
        ),
        ToolExample(
            description="Find the lines of code that contain a word",
            arguments={"pattern": "timeout", "output_mode": "content", "-n": True},
        ),
        ToolExample(
            description="Search the files for a regular expression",
            arguments={"pattern": "def \\w+_handler"},
        ),
        ToolExample(
            description="List the files that mention a string",
            arguments={"pattern": "FIXME", "output_mode": "files_with_matches"},
        ),
    ],
    notes=[
        "A pattern starting with '-' is a pattern, never an option.",
        f"Lines longer than {MAX_COLUMNS} characters are shown as a preview.",
        "Files are listed in path order; content is sorted by path so paging is stable.",
        "Symlinks are not followed, so the search never leaves the workspace.",
    ],
    permission=PermissionLevel.READ_ONLY,
    repeat_safe=True,  # it only reads
    risk=Risk.LOW,
    tags=["search", "read"],
    category="search",
    time_limit_s=30,
)


class GrepTool(Tool):
    descriptor = DESCRIPTOR

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        target = ctx.workspace.resolve(arguments.get("path", "."))
        if not target.exists():
            raise ToolExecutionError(f"path not found: {ctx.workspace.display(target)}")
        mode = arguments["output_mode"]
        search, text = self._search(ctx, target, rg_flags(arguments))
        # rg exits 2 when filters leave no file to search: for us an empty result, with
        # its explanation kept in `warnings`.
        nothing_searched = NO_FILES_SEARCHED in search.stderr
        failed = search.exit_code not in (0, 1) and not nothing_searched
        if failed and not text and not search.timed_out:
            raise ToolExecutionError(f"grep failed: {search.stderr.removeprefix('rg: ')}")
        start = arguments["offset"]
        end = start + arguments["head_limit"] if "head_limit" in arguments else None
        if mode == "content" and start == 0 and end is None:
            # The whole output: no need to split 100k lines only to join them again.
            total = text.count("\n") + 1 if text else 0
            page, returned = [text], total
        else:
            entries = split_lines(text)
            if mode != "content":
                entries.sort()
            total = len(entries)
            page = entries[start:end]
            returned = len(page)
        output: dict[str, Any] = {
            "mode": mode,
            "returned": returned,
            "total": total,
            "truncated": (end is not None and end < total) or search.truncated,
            "warnings": search.stderr or None,
        }
        if mode == "files_with_matches":
            output["files"] = page
        elif mode == "count":
            output["counts"] = [_count_entry(line) for line in page]
        else:
            output["content"] = "\n".join(page)
        if search.timed_out:
            raise ToolTimeout(
                f"grep timed out after {self.descriptor.time_limit_s:g} s; results are partial",
                output=output,
            )
        return ToolOutput(output=output)

    def _search(self, ctx: ToolContext, target: Path, flags: list[str]) -> tuple[RipgrepRun, str]:
        """Run rg on `target` opened by fd (never through a swapped-in link).

        Returns the run and its output with workspace-relative paths.
        """
        limit = self.descriptor.time_limit_s
        name = ctx.workspace.display(target)
        if target.is_dir():
            prefix = "" if target == ctx.workspace.root else f"{name}/"
            with open_directory(ctx.workspace, target) as fd:
                search = run_rg(ctx, flags, timeout_s=limit, cwd_fd=fd)
            return search, rename_paths(search.text, "", prefix)
        fd, _info = open_file(ctx.workspace, target)
        try:
            alias = f"/dev/fd/{fd}"
            search = run_rg(ctx, [*flags, "--", alias], timeout_s=limit, pass_fds=(fd,))
        finally:
            os.close(fd)
        return search, rename_paths(search.text, alias, name)


def rg_flags(arguments: dict[str, Any]) -> list[str]:
    """The rg options for a grep call (path excluded); shared with the benchmark."""
    mode = arguments["output_mode"]
    flags = [f"--max-columns={MAX_COLUMNS}", "--max-columns-preview"]
    if mode == "files_with_matches":
        flags.append("--files-with-matches")
    elif mode == "count":
        flags += ["--count", "--with-filename"]
    else:
        flags += ["--no-heading", "--with-filename", "--sort=path"]
        flags.append("--line-number" if arguments["-n"] else "--no-line-number")
        flags += [f"{k}{arguments[k]}" for k in ("-A", "-B", "-C") if k in arguments]
    if arguments["-i"]:
        flags.append("--ignore-case")
    if arguments["multiline"]:
        flags += ["--multiline", "--multiline-dotall"]
    if "glob" in arguments:
        flags += ["--glob", arguments["glob"]]
    if "type" in arguments:
        flags += ["--type", arguments["type"]]
    return [*flags, "--regexp", arguments["pattern"]]


def _count_entry(line: str) -> dict[str, Any]:
    path, _, count = line.rpartition(":")
    return {"path": path, "count": int(count)}

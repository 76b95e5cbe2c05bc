"""glob: files matching a pattern, newest first, honouring .gitignore."""

from __future__ import annotations

import os
import stat
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.fs import open_directory
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin._globpattern import compile_glob
from toolrun.tools.builtin._ripgrep import run_rg, split_lines
from toolrun.tools.model import ToolDescriptor, ToolExample

DESCRIPTOR = ToolDescriptor.builtin(
    name="glob",
    version="1.0.0",
    description=(
        "List files whose path (relative to `path`) matches a glob pattern, newest first. "
        "`*` and `?` match within one directory, `**/` any number of directories, "
        "`{a,b}` alternatives, `[abc]` a character class. Files ignored by .gitignore "
        "and hidden files are skipped unless asked for."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Glob, e.g. `**/*.py`."},
            "path": {
                "type": "string",
                "description": "Directory to search (default: the workspace root).",
            },
            "respect_gitignore": {"type": "boolean", "default": True},
            "include_hidden": {"type": "boolean", "default": False},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Workspace-relative paths, most recently modified first.",
            },
            "count": {"type": "integer", "description": "Files returned."},
            "total_matches": {"type": "integer"},
            "truncated": {"type": "boolean", "description": "More matches than the cap."},
            "timed_out": {"type": "boolean", "description": "The listing was cut by time."},
            "notice": {"type": ["string", "null"]},
        },
    },
    examples=[
        ToolExample(description="Find all Python files", arguments={"pattern": "**/*.py"}),
        ToolExample(
            description="List the TypeScript sources under src",
            arguments={"pattern": "**/*.{ts,tsx}", "path": "src"},
        ),
        ToolExample(
            description="List top-level Markdown files, ignored ones included",
            arguments={"pattern": "*.md", "respect_gitignore": False},
        ),
        ToolExample(
            description="Find files by name or extension", arguments={"pattern": "**/*.csv"}
        ),
        ToolExample(
            description="List every file matching a pattern under a folder",
            arguments={"pattern": "**/test_*.py", "path": "tests"},
        ),
    ],
    notes=[
        "Results are capped (1000 by default); `truncated` says when more matched.",
        "On time-out the files found so far are returned with `timed_out` set.",
        "Symlinks are not followed, so the listing never leaves the workspace.",
    ],
    permission=PermissionLevel.READ_ONLY,
    repeat_safe=True,  # it only reads
    risk=Risk.LOW,
    tags=["filesystem", "search"],
    category="search",
    time_limit_s=20,
)


class GlobTool(Tool):
    descriptor = DESCRIPTOR

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        matcher = compile_glob(arguments["pattern"])
        base = ctx.workspace.resolve(arguments.get("path", "."))
        if not base.is_dir():
            raise ToolExecutionError(f"not a directory: {ctx.workspace.display(base)}")
        flags = ["--files"]
        if not arguments["respect_gitignore"]:
            flags.append("--no-ignore")
        if arguments["include_hidden"]:
            flags += ["--hidden", "--glob", "!.git"]
        with open_directory(ctx.workspace, base) as base_fd:
            listing = run_rg(ctx, flags, timeout_s=self.descriptor.time_limit_s, cwd_fd=base_fd)
            if listing.exit_code not in (0, 1, None) and not listing.text:
                raise ToolExecutionError(f"listing files failed: {listing.stderr}")
            matches = [path for path in split_lines(listing.text) if matcher.match(path)]
            dated = _newest_first(base_fd, matches)
        prefix = "" if base == ctx.workspace.root else f"{ctx.workspace.display(base)}/"
        cap = ctx.settings.glob_max_results
        files = [prefix + path for path in dated[:cap]]
        notice = None
        if listing.timed_out:
            notice = (
                f"listing timed out after {self.descriptor.time_limit_s:g} s; results are partial"
            )
        elif len(dated) > cap:
            notice = f"showing the {cap} newest of {len(dated)} matches; narrow the pattern or path"
        return ToolOutput(
            output={
                "files": files,
                "count": len(files),
                "total_matches": len(dated),
                "truncated": len(dated) > cap,
                "timed_out": listing.timed_out,
                "notice": notice,
            }
        )


def _newest_first(base_fd: int, paths: list[str]) -> list[str]:
    """Paths (relative to `base_fd`) sorted by mtime, newest first, ties by path."""
    dated: list[tuple[int, str]] = []
    for path in paths:
        try:
            info = os.stat(path, dir_fd=base_fd, follow_symlinks=False)
        except OSError:
            continue  # vanished since listing
        if not stat.S_ISLNK(info.st_mode):  # rg lists no links; one here was swapped in since
            dated.append((-info.st_mtime_ns, path))
    dated.sort()
    return [path for _, path in dated]

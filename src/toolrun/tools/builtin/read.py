"""read: a text file with line numbers, paged, whatever its encoding."""

from __future__ import annotations

from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin._files import load_text, remember
from toolrun.tools.model import ToolDescriptor, ToolExample

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
CUT_MARK = " … [line truncated]"

DESCRIPTOR = ToolDescriptor.builtin(
    name="read",
    version="1.0.0",
    description=(
        "Read a text file in the workspace: its contents, as lines numbered like `cat -n` "
        "(right-aligned number, tab, text). Reads up to `limit` lines from `offset`; a longer "
        "file returns one page and says how to get the next. Detects the encoding (BOM, "
        "UTF-8, then detection, e.g. GBK) and refuses binary files."
    ),
    parameters={
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "File to read: relative to the workspace, or absolute inside it.",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "default": 1,
                "description": "First line to return (1-based).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "default": DEFAULT_LIMIT,
                "description": "Most lines to return.",
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "Numbered lines, `cat -n` style."},
            "start_line": {"type": "integer"},
            "lines_returned": {"type": "integer"},
            "total_lines": {"type": "integer"},
            "partial": {"type": "boolean", "description": "True when more lines follow."},
            "next_offset": {"type": ["integer", "null"], "description": "Offset of the next page."},
            "encoding": {"type": "string"},
            "line_ending": {"type": "string", "enum": ["LF", "CRLF"]},
            "notice": {"type": ["string", "null"], "description": "Paging hint or warning."},
        },
    },
    examples=[
        ToolExample(description="Read a whole source file", arguments={"file_path": "src/app.py"}),
        ToolExample(
            description="Read lines 100-149 of a log",
            arguments={"file_path": "logs/server.log", "offset": 100, "limit": 50},
        ),
        ToolExample(
            description="Read by absolute path inside the workspace",
            arguments={"file_path": "/workspace/README.md", "limit": 20},
        ),
        ToolExample(
            description="Show what a file contains", arguments={"file_path": "notes/todo.md"}
        ),
        ToolExample(description="Open a file to look at it", arguments={"file_path": ".env"}),
        ToolExample(
            description="Print the first lines of a text file",
            arguments={"file_path": "CHANGELOG.md", "limit": 20},
        ),
    ],
    notes=[
        f"Returns at most {DEFAULT_LIMIT} lines by default; lines over {MAX_LINE_CHARS} "
        "characters are cut and marked.",
        "A 10 MB file reads in tens of milliseconds; only the requested page is formatted.",
        "Paths are confined to the workspace; symlinks pointing outside it are refused.",
    ],
    permission=PermissionLevel.READ_ONLY,
    repeat_safe=True,  # it only reads
    risk=Risk.LOW,
    tags=["filesystem", "read"],
    category="filesystem",
    time_limit_s=10,
)


class ReadTool(Tool):
    descriptor = DESCRIPTOR
    starts_processes = False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = ctx.workspace.resolve(arguments["file_path"])
        name = ctx.workspace.display(path)
        text_file, info, size = load_text(ctx, path)
        remember(ctx, path, info)
        offset: int = arguments["offset"]
        text = text_file.normalized
        total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if total == 0:
            lines: list[str] = []
            notice: str | None = f"{name} is empty"
        elif offset > total:
            raise ToolExecutionError(
                f"offset {offset} is past the end of {name}, which has {total} lines"
            )
        else:
            end = min(offset - 1 + arguments["limit"], total)
            lines = text.split("\n", end)[offset - 1 : end]
            notice = None
            if end < total:
                notice = (
                    f"partial: showing lines {offset}-{end} of {total}; "
                    f"call read with offset={end + 1} to continue"
                )
        cut = 0
        if lines and max(map(len, lines)) > MAX_LINE_CHARS:
            cut = sum(1 for line in lines if len(line) > MAX_LINE_CHARS)
            lines = [_clip(line) for line in lines]
        content = "\n".join(map(str.__add__, _number_prefixes(offset, len(lines)), lines))
        next_offset = offset + len(lines) if offset + len(lines) <= total else None
        return ToolOutput(
            output={
                "content": content,
                "start_line": offset,
                "lines_returned": len(lines),
                "total_lines": total,
                "partial": next_offset is not None,
                "next_offset": next_offset,
                "encoding": text_file.encoding,
                "line_ending": text_file.line_ending,
                "notice": notice,
            },
            metadata={
                "file_size_bytes": size,
                "total_lines": total,
                "lines_returned": len(lines),
                "lines_truncated": cut,
            },
        )


_PREFIX_CACHE_LINES = 250_000
_prefixes: list[str] = []


def _number_prefixes(first: int, count: int) -> list[str]:
    """`cat -n` prefixes ("     7\t") for lines first..first+count-1.

    Formatting 100k integers costs more than everything else in a whole-file read, so the
    prefixes of the first 250k lines are made once per process and sliced.
    """
    end = first + count
    if end - 1 > _PREFIX_CACHE_LINES:
        return [f"{number:>6}\t" for number in range(first, end)]
    if len(_prefixes) < end - 1:
        _prefixes.extend(f"{number:>6}\t" for number in range(len(_prefixes) + 1, end))
    return _prefixes[first - 1 : end - 1]


def _clip(line: str) -> str:
    return line[:MAX_LINE_CHARS] + CUT_MARK if len(line) > MAX_LINE_CHARS else line

"""edit: replace an exact string in a file, refusing ambiguous or missing matches."""

from __future__ import annotations

from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin._files import ensure_unchanged, load_text, store_text
from toolrun.tools.model import ToolDescriptor, ToolExample

MAX_LISTED_LINES = 20

DESCRIPTOR = ToolDescriptor.builtin(
    name="edit",
    version="1.0.0",
    description=(
        "Edit a file: replace `old_string` with `new_string` in it. The match is exact and "
        "literal "
        "(no regex: `$` and backslashes are plain characters) and made on LF-normalised text, "
        "so it works on CRLF files, which keep their CRLF endings. Without `replace_all`, "
        "`old_string` must occur exactly once."
    ),
    parameters={
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "File to edit: relative to the workspace, or absolute inside it.",
            },
            "old_string": {
                "type": "string",
                "minLength": 1,
                "description": "Exact text to replace.",
            },
            "new_string": {"type": "string", "description": "Replacement text (must differ)."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of requiring exactly one.",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "replacements": {"type": "integer"},
            "lines": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "Line numbers (before the edit) where matches started.",
            },
        },
    },
    examples=[
        ToolExample(
            description="Rename a function at its definition",
            arguments={
                "file_path": "src/app.py",
                "old_string": "def old(",
                "new_string": "def new(",
            },
        ),
        ToolExample(
            description="Rename a variable everywhere in a file",
            arguments={
                "file_path": "src/app.py",
                "old_string": "count",
                "new_string": "total",
                "replace_all": True,
            },
        ),
        ToolExample(
            description="Delete a line by replacing it with nothing",
            arguments={"file_path": "notes.txt", "old_string": "obsolete line\n", "new_string": ""},
        ),
        ToolExample(
            description="Change one line of a config file",
            arguments={
                "file_path": "config.yaml",
                "old_string": "level: info",
                "new_string": "level: debug",
            },
        ),
        ToolExample(
            description="Fix a typo in a comment",
            arguments={
                "file_path": "src/app.py",
                "old_string": "# retrun early",
                "new_string": "# return early",
            },
        ),
    ],
    notes=[
        "0 matches is an error; several matches without replace_all is an error naming them.",
        "Refused when the file changed since this session last read it.",
        "The file is rewritten atomically in its original encoding and line endings.",
    ],
    permission=PermissionLevel.READ_WRITE,
    risk=Risk.MEDIUM,
    tags=["filesystem", "write"],
    category="filesystem",
    time_limit_s=10,
)


class EditTool(Tool):
    descriptor = DESCRIPTOR
    starts_processes = False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        old = _lf(arguments["old_string"])
        new = _lf(arguments["new_string"])
        if old == new:
            raise ToolExecutionError("old_string and new_string are identical; nothing to change")
        path = ctx.workspace.resolve(arguments["file_path"])
        name = ctx.workspace.display(path)
        text_file, info, _size = load_text(ctx, path)
        ensure_unchanged(ctx, path, info)
        text = text_file.normalized
        lines = _match_lines(text, old)
        if not lines:
            raise ToolExecutionError(f"old_string not found in {name}")
        if len(lines) > 1 and not arguments["replace_all"]:
            shown = ", ".join(map(str, lines[:MAX_LISTED_LINES]))
            more = " ..." if len(lines) > MAX_LISTED_LINES else ""
            raise ToolExecutionError(
                f"old_string matches {len(lines)} times in {name} (lines {shown}{more}); "
                "add surrounding text to make it unique, or set replace_all"
            )
        store_text(ctx, path, text_file, text.replace(old, new))
        return ToolOutput(output={"file_path": name, "replacements": len(lines), "lines": lines})


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _match_lines(text: str, needle: str) -> list[int]:
    """1-based line of each non-overlapping occurrence of `needle`."""
    lines = []
    line, scanned = 1, 0
    start = text.find(needle)
    while start != -1:
        line += text.count("\n", scanned, start)
        scanned = start
        lines.append(line)
        start = text.find(needle, start + len(needle))
    return lines

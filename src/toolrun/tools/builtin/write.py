"""write: create or replace a file atomically, keeping an existing file's style."""

from __future__ import annotations

from typing import Any

from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Risk
from toolrun.sandbox.fs import read_bytes
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin._files import ensure_unchanged, store_text
from toolrun.tools.builtin._text import TextFile, decode, is_binary
from toolrun.tools.model import ToolDescriptor, ToolExample

DESCRIPTOR = ToolDescriptor.builtin(
    name="write",
    version="1.0.0",
    description=(
        "Write text to a file in the workspace, new or replaced, creating parent "
        "directories. The write is "
        "atomic (temporary file, then rename). Replacing an existing file needs confirmation "
        "and keeps that file's encoding and line endings; it is refused when the file changed "
        "since this session last read it."
    ),
    parameters={
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "File to write: relative to the workspace, or absolute inside it.",
            },
            "content": {"type": "string", "description": "The file's complete new content."},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "bytes_written": {"type": "integer"},
            "created": {
                "type": "boolean",
                "description": "False when an existing file was replaced.",
            },
            "encoding": {"type": "string"},
            "line_ending": {"type": "string", "enum": ["LF", "CRLF"]},
        },
    },
    examples=[
        ToolExample(
            description="Create a new module",
            arguments={"file_path": "src/util.py", "content": "def add(a, b):\n    return a + b\n"},
        ),
        ToolExample(
            description="Create a file in a new directory",
            arguments={"file_path": "docs/notes/todo.md", "content": "# To do\n"},
        ),
        ToolExample(
            description="Replace a config file (asks for confirmation)",
            arguments={"file_path": "config.toml", "content": "debug = false\n"},
        ),
        ToolExample(
            description="Save text into a new file",
            arguments={"file_path": "notes.txt", "content": "Remember the release on Friday.\n"},
        ),
        ToolExample(
            description="Overwrite a file with new content",
            arguments={"file_path": "VERSION", "content": "2.0.0\n"},
        ),
    ],
    notes=[
        "Atomic: readers see the old or the new content, never a half-written file.",
        "Writes never follow a symlink out of the workspace.",
        "Replacing an existing file requires confirmation.",
    ],
    permission=PermissionLevel.READ_WRITE,
    risk=Risk.MEDIUM,
    tags=["filesystem", "write", "create"],
    category="filesystem",
    time_limit_s=10,
)


class WriteTool(Tool):
    descriptor = DESCRIPTOR
    starts_processes = False

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern | None:
        path = ctx.workspace.resolve(arguments["file_path"])
        try:
            exists = path.is_file()
        except OSError:  # e.g. a name too long: the write itself reports it
            exists = False
        if exists:
            replaced = ctx.workspace.display(path)
            return Concern(Risk.MEDIUM, f"write replaces the existing file {replaced}")
        return None

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = ctx.workspace.resolve(arguments["file_path"])
        # A new (or binary) file gets the content verbatim, in UTF-8.
        like = TextFile(arguments["content"], newline=None)
        if path.exists():
            data, info = read_bytes(ctx.workspace, path)
            ensure_unchanged(ctx, path, info)
            if not is_binary(data):
                like = decode(data, ctx.workspace.display(path))
        written, created = store_text(ctx, path, like, arguments["content"])
        return ToolOutput(
            output={
                "file_path": ctx.workspace.display(path),
                "bytes_written": written,
                "created": created,
                "encoding": like.encoding,
                "line_ending": like.line_ending,
            }
        )

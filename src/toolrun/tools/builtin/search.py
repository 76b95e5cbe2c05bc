"""search: ranked project search (BM25 over code and docs, definitions first)."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from toolrun.errors import ToolExecutionError, ToolrunError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.fs import read_bytes
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin._ripgrep import run_rg, split_lines
from toolrun.tools.builtin._text import decode, is_binary
from toolrun.tools.model import ToolDescriptor, ToolExample

if TYPE_CHECKING:
    from toolrun.search import Hit
    from toolrun.search.index import Stamp

MAX_FILE_BYTES = 1024 * 1024
SNIPPET_LINES = 6
SYMBOL_KINDS = {"function", "method", "class", "struct", "enum", "trait", "interface", "type"}
SYMBOL_KINDS |= {"module"}

DESCRIPTOR = ToolDescriptor.builtin(
    name="search",
    version="1.0.0",
    description=(
        "Ranked search across the workspace's code and docs: words, not regexes. Finds "
        "definitions (functions, classes, methods, types in Python, JavaScript, TypeScript, "
        "Rust and Go) and passages of text, best first (BM25; a definition whose name "
        "matches ranks above mere mentions; identifiers match by their parts, so 'retry "
        "policy' finds RetryPolicy and retry_policy). Each result has path, line, kind, "
        "symbol, snippet and score."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "Words to look for."},
            "path": {"type": "string", "description": "Only under this directory."},
            "kind": {
                "enum": ["any", "symbol", "text"],
                "default": "any",
                "description": "symbol: definitions only; text: chunks and doc sections only.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "line": {"type": "integer"},
                        "end_line": {"type": "integer"},
                        "kind": {"type": "string"},
                        "symbol": {"type": ["string", "null"]},
                        "container": {"type": ["string", "null"]},
                        "snippet": {"type": "string"},
                        "score": {"type": "number"},
                    },
                },
            },
            "indexed_files": {"type": "integer"},
            "updated_files": {"type": "integer", "description": "Reindexed for this call."},
        },
    },
    examples=[
        ToolExample(
            description="Where retries are configured", arguments={"query": "retry policy backoff"}
        ),
        ToolExample(
            description="A class's definition",
            arguments={"query": "HistoryStore", "kind": "symbol"},
        ),
        ToolExample(
            description="Docs about deployment under docs/",
            arguments={"query": "deploy kubernetes", "path": "docs", "kind": "text"},
        ),
        ToolExample(
            description="Find where in the code base a feature is handled",
            arguments={"query": "password reset"},
        ),
        ToolExample(
            description="Look up code and docs about a topic", arguments={"query": "caching"}
        ),
    ],
    notes=[
        "The index lives outside the workspace (TOOLRUN_HOME/search) and is built on the "
        "first call; later calls reindex only files whose modification time or size changed.",
        "Files ignored by .gitignore, hidden files, binary files and files over 1 MiB are "
        "not indexed.",
        "Use grep for exact strings and regular expressions.",
    ],
    permission=PermissionLevel.READ_ONLY,
    repeat_safe=True,  # it only reads
    risk=Risk.LOW,
    tags=["search", "code"],
    category="search",
    time_limit_s=120,
)


class SearchTool(Tool):
    descriptor = DESCRIPTOR

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        base = ctx.workspace.resolve(arguments.get("path", "."))
        if not base.is_dir():
            raise ToolExecutionError(f"not a directory: {ctx.workspace.display(base)}")
        # The index (tantivy, tree-sitter's grammars) is imported by a search, not with
        # the registry.
        from toolrun.search import SearchIndex  # noqa: PLC0415

        index = SearchIndex(ctx.settings.platform_home / "search")
        update = index.update(_listing(ctx), lambda path: _text(ctx, path))
        prefix = "" if base == ctx.workspace.root else ctx.workspace.display(base) + "/"
        wanted = arguments["kind"]
        limit = arguments["limit"]
        hits = [
            hit
            for hit in index.search(arguments["query"], limit=max(limit * 10, 200))
            if hit.path.startswith(prefix) and _kind_matches(hit, wanted)
        ][:limit]
        return ToolOutput(
            output={
                "results": [_result(ctx, hit) for hit in hits],
                "indexed_files": update.indexed_files,
                "updated_files": update.updated_files,
            }
        )


def _listing(ctx: ToolContext) -> dict[str, Stamp]:
    """Every file rg would search (gitignore and hidden rules apply), with its stamp."""
    listed = run_rg(ctx, ["--files"], timeout_s=60)
    if listed.exit_code not in (0, 1, None) and not listed.text:
        raise ToolExecutionError(f"listing files failed: {listed.stderr}")
    files: dict[str, Stamp] = {}
    for path in split_lines(listed.text):
        try:
            info = os.lstat(ctx.workspace.root / path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
            files[path] = (info.st_mtime_ns, info.st_size)
    return files


def _text(ctx: ToolContext, path: str) -> str | None:
    """A listed file's text, read through the workspace's confinement; None if binary."""
    try:
        data, _info = read_bytes(ctx.workspace, ctx.workspace.resolve(path))
    except (ToolrunError, OSError):  # vanished, swapped for a link, unreadable: skip it
        return None
    if is_binary(data):
        return None
    try:
        return decode(data, path).text
    except ToolExecutionError:
        return None


def _kind_matches(hit: Hit, wanted: str) -> bool:
    if wanted == "any":
        return True
    return (hit.kind in SYMBOL_KINDS) == (wanted == "symbol")


def _result(ctx: ToolContext, hit: Hit) -> dict[str, Any]:
    text = _text(ctx, hit.path) or ""
    lines = text.splitlines()[hit.line - 1 : min(hit.end_line, hit.line - 1 + SNIPPET_LINES)]
    return {
        "path": hit.path,
        "line": hit.line,
        "end_line": hit.end_line,
        "kind": hit.kind,
        "symbol": hit.symbol,
        "container": hit.container,
        "snippet": "\n".join(line[:200] for line in lines),
        "score": hit.score,
    }

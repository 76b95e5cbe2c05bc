"""lsp: code intelligence from a language server (definition, references, hover,
symbols, diagnostics), the server kept warm per workspace in the worker."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.lsp import LspSession, ServerPool, ServerSpec, language_of, results, server_for
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.fs import read_bytes
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample

DIAGNOSTICS_WAIT_S = 10.0

DESCRIPTOR = ToolDescriptor.builtin(
    name="lsp",
    version="1.0.0",
    description=(
        "Ask a language server about code: `definition`, `references` and `hover` at a "
        "position (1-based `line` and `column`, or a `symbol` name found in the file), "
        "`document_symbols` of a file, `workspace_symbols` matching a query, and "
        "`diagnostics` (errors and warnings) of a file. Places come back as "
        "path:line:column with the line's text. Python works out of the box "
        "(jedi-language-server); TypeScript/JavaScript, Rust and Go use "
        "typescript-language-server, rust-analyzer and gopls when installed."
    ),
    parameters={
        "type": "object",
        "properties": {
            "operation": {
                "enum": [
                    "definition",
                    "references",
                    "hover",
                    "document_symbols",
                    "workspace_symbols",
                    "diagnostics",
                ]
            },
            "file_path": {"type": "string", "minLength": 1},
            "line": {"type": "integer", "minimum": 1},
            "column": {"type": "integer", "minimum": 1, "default": 1},
            "symbol": {
                "type": "string",
                "minLength": 1,
                "description": "A name: its first whole-word occurrence (on `line`, if given).",
            },
            "query": {"type": "string", "description": "For workspace_symbols."},
            "language": {
                "enum": ["python", "typescript", "javascript", "rust", "go"],
                "description": "For workspace_symbols without a file_path (default python).",
            },
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "locations": {"type": "array", "items": {"type": "object"}},
            "hover": {"type": "string"},
            "symbols": {"type": "array", "items": {"type": "object"}},
            "diagnostics": {"type": "array", "items": {"type": "object"}},
            "position": {"type": "object", "description": "Where the question was asked."},
        },
    },
    examples=[
        ToolExample(
            description="Where is the function called on line 12 defined?",
            arguments={
                "operation": "definition",
                "file_path": "app/main.py",
                "line": 12,
                "column": 9,
            },
        ),
        ToolExample(
            description="Every use of a class",
            arguments={"operation": "references", "file_path": "app/models.py", "symbol": "User"},
        ),
        ToolExample(
            description="Errors in a file",
            arguments={"operation": "diagnostics", "file_path": "app/main.py"},
        ),
        ToolExample(
            description="Outline the classes and methods of a file",
            arguments={"operation": "document_symbols", "file_path": "app/models.py"},
        ),
        ToolExample(
            description="Show the documentation of a symbol",
            arguments={"operation": "hover", "file_path": "app/main.py", "symbol": "run"},
        ),
    ],
    notes=[
        "Servers start on the first call for a workspace and language (a few seconds), "
        "stay warm in the worker, start again if they die and stop after TOOLRUN_LSP_IDLE_S.",
        "Servers are configured with TOOLRUN_LSP_SERVERS, e.g. "
        '{"rust": ["/opt/rust-analyzer"]}; a missing server is a clear error.',
        "Places outside the workspace (a library's source) are given with their absolute "
        "path and `outside_workspace`, without their text.",
    ],
    permission=PermissionLevel.READ_ONLY,
    repeat_safe=True,  # it only reads
    risk=Risk.LOW,
    tags=["code", "lsp"],
    category="code_intelligence",
    time_limit_s=60,
)


class LspTool(Tool):
    descriptor = DESCRIPTOR

    def __init__(self) -> None:
        super().__init__()
        self._pool: ServerPool | None = None

    def pool(self, ctx: ToolContext) -> ServerPool:
        """This process's servers (one pool per tool instance)."""
        if self._pool is None:
            self._pool = ServerPool(_starter(ctx), idle_s=ctx.settings.lsp_idle_s)
        return self._pool

    def pool_sessions(self) -> list[LspSession]:
        """The servers running for this tool in this process."""
        return [] if self._pool is None else self._pool.sessions()

    def pool_close(self) -> None:
        """Shut this tool's servers down."""
        if self._pool is not None:
            self._pool.close()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        operation = arguments["operation"]
        lines = results.Lines(ctx.workspace)
        if operation == "workspace_symbols":
            return ToolOutput(self._workspace_symbols(arguments, ctx, lines))
        if "file_path" not in arguments:
            raise ToolExecutionError(f"{operation} needs file_path")
        path = ctx.workspace.resolve(arguments["file_path"])
        text = _read(ctx, path)
        session = self._session(ctx, language_of(path))
        uri = session.sync(path, text)
        document = {"textDocument": {"uri": uri}}
        if operation == "document_symbols":
            answer = session.request("textDocument/documentSymbol", document)
            return ToolOutput({"symbols": results.symbols(lines, answer, uri)})
        if operation == "diagnostics":
            found = session.diagnostics(uri, DIAGNOSTICS_WAIT_S)
            return ToolOutput({"diagnostics": [results.diagnostic(lines, uri, d) for d in found]})
        line, column = _position(text, arguments)
        at = {
            **document,
            "position": {
                "line": line - 1,
                "character": results.utf16_column(text.splitlines()[line - 1], column),
            },
        }
        shown = {"path": ctx.workspace.display(path), "line": line, "column": column}
        if operation == "hover":
            answer = session.request("textDocument/hover", at)
            return ToolOutput({"hover": results.hover_text(answer), "position": shown})
        if operation == "definition":
            answer = session.request("textDocument/definition", at)
        else:
            answer = session.request(
                "textDocument/references", {**at, "context": {"includeDeclaration": True}}
            )
        return ToolOutput({"locations": results.locations(lines, answer), "position": shown})

    def _workspace_symbols(
        self, arguments: dict[str, Any], ctx: ToolContext, lines: results.Lines
    ) -> dict[str, Any]:
        if "file_path" in arguments:
            language = language_of(ctx.workspace.resolve(arguments["file_path"]))
        else:
            language = arguments.get("language", "python")
        session = self._session(ctx, language)
        answer = session.request("workspace/symbol", {"query": arguments.get("query", "")})
        return {"symbols": results.symbols(lines, answer)}

    def _session(self, ctx: ToolContext, language: str) -> LspSession:
        spec = server_for(language, ctx.settings.lsp_servers)
        return self.pool(ctx).session(spec, ctx.workspace.root)


def _starter(ctx: ToolContext) -> Callable[[ServerSpec, Path], LspSession]:
    """How the pool starts a server: the call's runner, in the root (in a jail, a HOME of
    its own for its caches; unjailed, one outside the workspace)."""
    settings, runner = ctx.settings, ctx.runner

    def start(spec: ServerSpec, root: Path) -> LspSession:
        if runner.jail is None:
            home = settings.platform_home / "lsp"
            home.mkdir(parents=True, exist_ok=True)
            env = {**runner.env, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
            return LspSession(spec, root, runner=replace(runner, env=env))
        return LspSession(spec, root, runner=runner)

    return start


def _read(ctx: ToolContext, path: Path) -> str:
    data, _info = read_bytes(ctx.workspace, path)
    return data.decode(errors="replace")


def _position(text: str, arguments: dict[str, Any]) -> tuple[int, int]:
    """The 1-based (line, column) asked about: given, or where `symbol` first appears."""
    lines = text.splitlines()
    line = arguments.get("line")
    if line is not None and not 1 <= line <= len(lines):
        raise ToolExecutionError(f"line {line} is outside the file (it has {len(lines)} lines)")
    symbol = arguments.get("symbol")
    if symbol is None:
        if line is None:
            raise ToolExecutionError(f"{arguments['operation']} needs line (and column) or symbol")
        return line, arguments["column"]
    pattern = re.compile(rf"(?<![\w]){re.escape(symbol)}(?![\w])")
    candidates = [line] if line is not None else range(1, len(lines) + 1)
    for number in candidates:
        found = pattern.search(lines[number - 1])
        if found:
            return number, found.start() + 1
    where = f"line {line}" if line is not None else "the file"
    raise ToolExecutionError(f"symbol {symbol!r} does not appear in {where}")

"""LSP answers as agents read them: workspace paths, 1-based lines and columns, the
line's text; nothing is read outside the workspace."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from toolrun.errors import ToolrunError
from toolrun.sandbox.fs import read_bytes
from toolrun.sandbox.paths import Workspace

SYMBOL_KINDS = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum_member",
    "struct",
    "event",
    "operator",
    "type_parameter",
]
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class Lines:
    """Reads workspace files once per call, for the text of result lines."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._files: dict[Path, list[str] | None] = {}

    def of(self, path: Path) -> list[str] | None:
        """The file's lines, or None when it is outside the workspace or unreadable."""
        if path not in self._files:
            self._files[path] = None
            if path.is_relative_to(self.workspace.root):
                with contextlib.suppress(ToolrunError, OSError):  # gone: no text shown
                    data, _ = read_bytes(self.workspace, path)
                    self._files[path] = data.decode(errors="replace").splitlines()
        return self._files[path]


def utf16_column(text: str, column: int) -> int:
    """A 1-based character column as LSP's 0-based UTF-16 offset."""
    return len(text[: column - 1].encode("utf-16-le")) // 2


def character_column(text: str | None, utf16: int) -> int:
    """LSP's UTF-16 offset as a 1-based character column."""
    if text is None:
        return utf16 + 1
    encoded = text.encode("utf-16-le")[: utf16 * 2]
    return len(encoded.decode("utf-16-le", errors="ignore")) + 1


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path)).resolve()


def location(lines: Lines, uri: str, start: dict[str, int]) -> dict[str, Any]:
    """One place: path (workspace-relative when inside), 1-based line and column, text."""
    path = path_of(uri)
    file_lines = lines.of(path)
    number = start.get("line", 0)
    text = file_lines[number] if file_lines is not None and number < len(file_lines) else None
    inside = path.is_relative_to(lines.workspace.root)
    shown = lines.workspace.display(path) if inside else str(path)
    column = character_column(text, start.get("character", 0))
    found: dict[str, Any] = {
        "path": shown,
        "line": number + 1,
        "column": column,
        "text": text,
        "location": f"{shown}:{number + 1}:{column}",
    }
    if not inside:
        found["outside_workspace"] = True
    return found


def locations(lines: Lines, answer: Any) -> list[dict[str, Any]]:
    """Location, Location[] or LocationLink[] as a list of places."""
    items = answer if isinstance(answer, list) else [answer] if answer else []
    found = []
    for item in items:
        uri = item.get("uri") or item.get("targetUri")
        span = item.get("range") or item.get("targetSelectionRange") or {}
        if uri:
            found.append(location(lines, uri, span.get("start", {})))
    return found


def hover_text(answer: Any) -> str:
    """Hover contents (MarkupContent, MarkedString or a list of them) as text."""
    contents = answer.get("contents") if isinstance(answer, dict) else None
    parts = contents if isinstance(contents, list) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            texts.append(str(part.get("value", "")))
    return "\n\n".join(text for text in texts if text).strip()


def symbols(lines: Lines, answer: Any, uri: str | None = None) -> list[dict[str, Any]]:
    """DocumentSymbol (nested), SymbolInformation or WorkspaceSymbol lists, flattened."""
    found: list[dict[str, Any]] = []

    def visit(item: dict[str, Any], container: str | None) -> None:
        place = item.get("location") or {}
        target = place.get("uri") or uri
        span = item.get("selectionRange") or place.get("range") or item.get("range") or {}
        kind = item.get("kind", 0)
        entry = {
            "name": item.get("name", ""),
            "kind": SYMBOL_KINDS[kind - 1] if 0 < kind <= len(SYMBOL_KINDS) else str(kind),
            "container": item.get("containerName") or container,
        }
        if target:
            entry |= location(lines, target, span.get("start", {}))
        found.append(entry)
        for child in item.get("children") or []:
            visit(child, entry["name"])

    for item in answer or []:
        visit(item, None)
    return found


def diagnostic(lines: Lines, uri: str, item: dict[str, Any]) -> dict[str, Any]:
    place = location(lines, uri, item.get("range", {}).get("start", {}))
    return {
        "severity": SEVERITIES.get(item.get("severity", 1), "error"),
        "message": item.get("message", ""),
        "source": item.get("source"),
        "code": item.get("code"),
        **{key: place[key] for key in ("path", "line", "column", "location")},
    }

"""Turning source text into what the index matches: identifiers split into words, and
files cut into chunks."""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_HEADING = re.compile(r"^(#{1,6} |=+$|-+$)")
CHUNK_LINES = 40
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")


@dataclass(frozen=True)
class Chunk:
    line: int  # 1-based first line
    end_line: int
    text: str
    title: str  # a doc section's heading, else ""


def words(text: str) -> str:
    """The parts of every compound identifier (``RetryPolicy``, ``max_delay``), so that a
    query for "retry policy" matches them; simple words are left to the tokenizer."""
    parts: list[str] = []
    for identifier in set(_IDENTIFIER.findall(text)):
        split = [part.lower() for part in _HUMPS.findall(identifier)]
        if len(split) > 1:
            parts += split
    return " ".join(parts)


def query_words(query: str) -> list[str]:
    """A query as plain lowercase words (never query syntax): identifiers are split."""
    found = []
    for token in re.findall(r"[A-Za-z0-9_]+", query):
        found.append(token.lower())
        found += [part.lower() for part in _HUMPS.findall(token)]
    return list(dict.fromkeys(word for word in found if word.strip("_")))


def chunks(path: str, text: str) -> list[Chunk]:
    """A doc file by its sections, anything else in windows of CHUNK_LINES lines."""
    lines = text.splitlines()
    if path.lower().endswith(DOC_SUFFIXES):
        return _sections(lines)
    return [
        Chunk(
            start + 1,
            min(start + CHUNK_LINES, len(lines)),
            "\n".join(lines[start : start + CHUNK_LINES]),
            "",
        )
        for start in range(0, len(lines), CHUNK_LINES)
    ]


def _sections(lines: list[str]) -> list[Chunk]:
    starts = [0] + [
        i for i, line in enumerate(lines) if i and line.startswith("#") and _HEADING.match(line)
    ]
    found = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        for piece in range(start, end, CHUNK_LINES * 2):
            stop = min(piece + CHUNK_LINES * 2, end)
            title = (
                lines[start].lstrip("#").strip() if lines and lines[start].startswith("#") else ""
            )
            found.append(Chunk(piece + 1, stop, "\n".join(lines[piece:stop]), title))
    return [chunk for chunk in found if chunk.text.strip()]

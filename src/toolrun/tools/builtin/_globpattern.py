"""Glob patterns (`**`, `*`, `?`, `[...]`, `{a,b}`) compiled to regexes over relative paths."""

from __future__ import annotations

import re

from toolrun.errors import ToolExecutionError


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Regex matching whole POSIX relative paths against `pattern`.

    `*` and `?` stay within one path segment; a `**` segment spans any number of them
    (zero included); `{a,b}` lists alternatives.

    Raises:
        ToolExecutionError: unbalanced brackets or braces.
    """
    pattern = pattern.removeprefix("./")
    return re.compile(_translate(pattern, pattern) + r"\Z", re.DOTALL)


def _translate(pattern: str, whole: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
            end = i + 2
            if end == len(pattern):
                out.append(".*")
                i = end
                continue
            if pattern[end] == "/":
                out.append("(?:.*/)?")
                i = end + 1
                continue
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = pattern.find("]", i + 2)
            if close == -1:
                raise ToolExecutionError(f"invalid glob pattern {whole!r}: unclosed '['")
            body = pattern[i + 1 : close]
            negate = body[:1] in {"!", "^"}
            body = body[1:] if negate else body
            # No class matches '/'; set-operator look-alikes ([, &&, ~~, ||) are escaped.
            escaped = re.sub(r"([\\\[&~|])", r"\\\1", body)
            out.append("(?!/)[" + ("^" if negate else "") + escaped + "]")
            i = close
        elif char == "{":
            close = _matching_brace(pattern, i, whole)
            options = _split_options(pattern[i + 1 : close])
            out.append("(?:" + "|".join(_translate(opt, whole) for opt in options) + ")")
            i = close
        elif char == "}":
            raise ToolExecutionError(f"invalid glob pattern {whole!r}: unmatched '}}'")
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _matching_brace(pattern: str, start: int, whole: str) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == "{":
            depth += 1
        elif pattern[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    raise ToolExecutionError(f"invalid glob pattern {whole!r}: unclosed '{{'")


def _split_options(body: str) -> list[str]:
    options: list[str] = []
    current: list[str] = []
    depth = 0
    for char in body:
        if char == "," and depth == 0:
            options.append("".join(current))
            current = []
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current.append(char)
    options.append("".join(current))
    return options

"""The values a task's text holds, for step 5: quoted strings, URLs, paths, glob patterns,
dates, literal lists, numbers (with the words around them, scales and percentages),
identifiers, capitalised names, a "replace A with B" pair and a "10 to 20" range."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass, fields, replace
from datetime import date
from functools import lru_cache
from typing import Any

from toolrun.selection.text import STOP_WORDS, split_words, stem

_QUOTED = re.compile(r"\"([^\"]+)\"|(?<!\w)'([^']{2,})'(?!\w)|“([^”]+)”")
_URL = re.compile(r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]")
_PATH = re.compile(
    r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+|(?<![\w/])[\w-]+\.[A-Za-z0-9]{1,5}\b"
)
# *.md, src/**/*.py, file?.txt; a "?" ending a word ("defined?") asks, it is no wildcard.
_GLOB = re.compile(r"(?<!\S)[\w./-]*(?:\*|\?(?=[\w/*?{-]|\.\w))[\w./*?{},-]*")
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9}
_NUMBER = re.compile(
    r"(?P<money>\$\s?)?(?<![\w.])(?P<value>-?\d+(?:,\d{3})*(?:\.\d+)?)(?![\w.]*\d)"
    r"(?:\s*(?P<scale>thousand|million|billion|trillion)\b|(?P<suffix>[KMB]|(?<=\d)[kmb](?=\W|$))"
    r"(?![A-Za-z/]))?(?P<percent>\s?%)?"
)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_WORD_DATE = re.compile(
    r"\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I
)
_PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z]+(?:\s+[A-Z][a-zA-Z]+)*)")
# snake_case or camelCase names: parse_args, loadConfig.
_IDENTIFIER = re.compile(r"(?<![\w./-])(?:[A-Za-z]\w*_\w*[A-Za-z0-9]|[a-z]+[A-Z]\w*)(?![\w/])")
# [1, 2, 3], ['Sam', 'Alice'], (3, 4): a literal list of numbers or quoted strings.
_LITERAL = re.compile(
    r"\[\s*(?:-?\d[\d.]*|'[^'\[\]]*'|\"[^\"\[\]]*\")(?:\s*,\s*(?:-?\d[\d.]*|'[^'\[\]]*'|"
    r"\"[^\"\[\]]*\"))*\s*\]|\(\s*-?\d[\d.]*(?:\s*,\s*-?\d[\d.]*)+\s*\)"
)
_REPLACE = re.compile(
    r"\b(?P<verb>replace|substitute)\s+(?P<old>\"[^\"]+\"|'[^']+'|[^\s\"']+)\s+"
    r"(?:with|by)\s+(?P<new>\"[^\"]+\"|'[^']+'|[^\s\"',;]+)",
    re.I,
)
_RANGE = re.compile(r"\b(\d+)\s*(?:to|-|\u2013|through)\s*(\d+)\b")
_CLAUSE_END = re.compile(r"[,;:!?()]|\.(?!\d)|\band\b|\bor\b")
NEAR_BEFORE = 4  # words before a number that may name it
NEAR_AFTER = 2  # … and after it ("440 Hz", "5 seconds")


@dataclass
class Number:
    """A number in the task, the stems of the words just before and after it."""

    value: float | int
    before: list[str]
    after: list[str]
    percent: bool = False


@dataclass
class Facts:
    """The values a task's text holds, each used once."""

    quoted: list[str]
    urls: list[str]
    paths: list[str]
    patterns: list[str]  # glob patterns
    dates: list[str]
    numbers: list[Number]
    names: list[str]  # capitalised phrases
    lists: list[list[Any]]  # literal lists
    identifiers: list[str]  # snake_case and camelCase names
    pair: tuple[str, str] | None = None  # "replace A with B"
    range: tuple[int, int] | None = None  # "lines 10 to 20"

    @classmethod
    def of(cls, task: str) -> Facts:
        """The facts of `task`, a fresh copy to use up (parsed once per task)."""
        parsed = _parsed(task)
        copied: dict[str, Any] = {
            f.name: [list(v) if isinstance(v, list) else v for v in value]
            for f in fields(parsed)
            if isinstance(value := getattr(parsed, f.name), list)
        }
        return replace(parsed, **copied)

    @classmethod
    def _parse(cls, task: str) -> Facts:
        urls = _URL.findall(task)
        rest = _URL.sub(" ", task)
        pair = None
        if found := _REPLACE.search(rest):
            pair = (_unquoted(found["old"]), _unquoted(found["new"]))
            rest = rest[: found.start()] + found["verb"] + " " + rest[found.end() :]
        lists = [_literal(text) for text in _LITERAL.findall(rest)]
        rest = _LITERAL.sub(" ", rest)
        quoted = [next(g for g in groups if g) for groups in _QUOTED.findall(rest)]
        dates = _ISO_DATE.findall(rest) + [
            date(int(y), _MONTHS.index(m.lower()) + 1, int(d)).isoformat()
            for m, d, y in _WORD_DATE.findall(rest)
        ]
        plain = _WORD_DATE.sub(" ", _ISO_DATE.sub(" ", _QUOTED.sub(" ", rest)))
        patterns = [p.rstrip(".,;:?") for p in _GLOB.findall(plain)]
        plain = _GLOB.sub(" ", plain)
        paths = file_paths(plain)
        identifiers = _IDENTIFIER.findall(_PATH.sub(" ", plain))
        spans = _RANGE.search(plain)
        names = [n for n in _PROPER.findall(plain) if n.lower() not in {"i", "can", "what"}]
        return cls(
            quoted,
            urls,
            paths,
            patterns,
            dates,
            numbers(plain),
            names,
            [items for items in lists if items],
            identifiers,
            pair,
            (int(spans[1]), int(spans[2])) if spans else None,
        )


@lru_cache(maxsize=256)
def _parsed(task: str) -> Facts:
    return Facts._parse(task)


def numbers(text: str) -> list[Number]:
    """The numbers in `text`: "1,200" is 1200, "$1.2M" and "1.2 million" 1200000."""
    found = []
    for match in _NUMBER.finditer(text):
        digits = match["value"].replace(",", "")
        value: float | int = float(digits) if "." in digits else int(digits)
        scale = _SCALES.get((match["scale"] or "").lower())
        if match["suffix"] and (match["suffix"].isupper() or match["money"]):
            scale = _SUFFIXES[match["suffix"].lower()]
        if scale:
            value = value * scale
            value = int(value) if float(value).is_integer() else value
        before = split_words(text[: match.start()])[-NEAR_BEFORE:]
        after_text = _CLAUSE_END.split(text[match.end() :], maxsplit=1)[0]
        after = [w for w in split_words(after_text) if not w.isdigit()][:NEAR_AFTER]
        found.append(
            Number(
                value,
                [stem(w) for w in before if not w.isdigit()],
                [stem(w) for w in after if w not in STOP_WORDS],
                bool(match["percent"]),
            )
        )
    return found


def urls(text: str) -> list[str]:
    """The http(s) URLs in `text`."""
    return list(_URL.findall(text))


def file_paths(text: str) -> list[str]:
    """The file paths in `text` (``src/app.py``, ``notes.md``; not ``3.5``), URLs aside."""
    return [p for p in _PATH.findall(_URL.sub(" ", text)) if not p.replace(".", "").isdigit()]


def without_values(task: str, keep: Collection[str] = ()) -> str:
    """`task` without the values it holds (URLs, glob patterns, paths, literal lists,
    identifiers but those in `keep`, what to replace with what): words about what to do
    are left for matching, values for the arguments."""
    rest = _REPLACE.sub(lambda found: found["verb"], _URL.sub(" ", task))
    rest = _LITERAL.sub(" ", _GLOB.sub(" ", rest))
    rest = _IDENTIFIER.sub(lambda found: found[0] if found[0] in keep else " ", rest)
    return _PATH.sub(" ", rest)


def _unquoted(text: str) -> str:
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text


def _literal(text: str) -> list[Any]:
    """A literal list's items; a tuple's as a list."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return []
    return list(value) if isinstance(value, list | tuple) else []

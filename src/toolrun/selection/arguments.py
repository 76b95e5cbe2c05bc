"""Step 5 of selection: argument values for the chosen tool from the task's words and a
supplied context — quoted strings, numbers (units dropped), paths, URLs, dates, enum
values — checked against the tool's schema, with missing required parameters named."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.text import split_words, stem
from toolrun.tools.validation import argument_errors, validator_for

_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']{2,})'|“([^”]+)”")
_URL = re.compile(r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]")
_PATH = re.compile(
    r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+|(?<![\w/])[\w-]+\.[A-Za-z0-9]{1,5}\b"
)
_GLOB = re.compile(r"(?<!\S)[\w./-]*[*?][\w./*?{},-]*")  # *.md, src/**/*.py
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?![\w.]*\d)")
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
_NEAR = 4  # words before a number that may name what it is


@dataclass
class Filled:
    """Step 5's answer: the arguments, where each came from, and what is missing."""

    arguments: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.missing and not self.errors


@dataclass
class Facts:
    """The values a task's text holds, each used once."""

    quoted: list[str]
    urls: list[str]
    paths: list[str]
    patterns: list[str]  # glob patterns
    dates: list[str]
    numbers: list[tuple[float | int, list[str]]]  # value, the words just before it
    names: list[str]  # capitalised phrases

    @classmethod
    def of(cls, task: str) -> Facts:
        urls = _URL.findall(task)
        rest = _URL.sub(" ", task)
        quoted = [next(g for g in groups if g) for groups in _QUOTED.findall(rest)]
        dates = _ISO_DATE.findall(rest) + [
            date(int(y), _MONTHS.index(m.lower()) + 1, int(d)).isoformat()
            for m, d, y in _WORD_DATE.findall(rest)
        ]
        plain = _WORD_DATE.sub(" ", _ISO_DATE.sub(" ", _QUOTED.sub(" ", rest)))
        patterns = [p.rstrip(".,;:") for p in _GLOB.findall(plain)]
        plain = _GLOB.sub(" ", plain)
        paths = file_paths(plain)
        numbers = []
        for found in _NUMBER.finditer(plain):
            text = found.group().replace(",", "")
            value: float | int = float(text) if "." in text else int(text)
            before = split_words(plain[: found.start()])[-_NEAR:]
            numbers.append((value, [stem(w) for w in before]))
        names = [n for n in _PROPER.findall(plain) if n.lower() not in {"i", "can", "what"}]
        return cls(quoted, urls, paths, patterns, dates, numbers, names)


def urls(text: str) -> list[str]:
    """The http(s) URLs in `text`."""
    return list(_URL.findall(text))


def file_paths(text: str) -> list[str]:
    """The file paths in `text` (``src/app.py``, ``notes.md``; not ``3.5``), URLs aside."""
    return [p for p in _PATH.findall(_URL.sub(" ", text)) if not p.replace(".", "").isdigit()]


def without_values(task: str) -> str:
    """`task` without the values it holds (URLs, glob patterns, paths): words about
    what to do are left for matching, values for the arguments."""
    return _PATH.sub(" ", _GLOB.sub(" ", _URL.sub(" ", task)))


def fill(card: ToolCard, task: str, context: dict[str, Any] | None = None) -> Filled:
    """Arguments for `card` from `task` and `context` (values by parameter name win)."""
    facts = Facts.of(task)
    context = context or {}
    filled = Filled({})
    order = card.required + [p for p in card.properties if p not in card.required]
    numeric = [p for p in order if _kind(card.properties[p]) in ("integer", "number")]
    numbers = _assign_numbers(numeric, card, facts.numbers)
    for name in order:
        spec = card.properties[name]
        if name in context:
            filled.arguments[name], filled.sources[name] = context[name], "context"
            continue
        value, source = _value(name, spec, task, facts, numbers)
        if value is not None:
            filled.arguments[name], filled.sources[name] = value, source
        elif name in card.required:
            filled.missing.append(name)
    problems = argument_errors(validator_for(card.parameters), filled.arguments)
    if problems:
        filled.errors.append(problems)
    return filled


def checked(
    card: ToolCard, arguments: dict[str, Any], context: dict[str, Any], source: str
) -> Filled:
    """`arguments` found some other way (a model) with `context` over them, checked like
    `fill`'s."""
    values = {**arguments, **{k: v for k, v in context.items() if k in card.properties}}
    filled = Filled(
        values,
        sources={name: "context" if name in context else source for name in values},
        missing=[name for name in card.required if name not in values],
    )
    problems = argument_errors(validator_for(card.parameters), values)
    if problems:
        filled.errors.append(problems)
    return filled


def _kind(spec: dict[str, Any]) -> str:
    kind = spec.get("type", "string")
    return kind[0] if isinstance(kind, list) and kind else str(kind)


def _assign_numbers(
    names: list[str], card: ToolCard, numbers: list[tuple[float | int, list[str]]]
) -> dict[str, float | int]:
    """Numbers to numeric parameters: one named just before a number gets it; the rest
    in order."""
    chosen: dict[str, float | int] = {}
    left = list(numbers)
    for name in names:
        words = {stem(w) for w in split_words(name)}
        for item in left:
            if words & set(item[1]):
                chosen[name] = item[0]
                left.remove(item)
                break
    for name in names:
        if name not in chosen and left:
            chosen[name] = left.pop(0)[0]
    for name in names:
        if name in chosen and _kind(card.properties[name]) == "integer":
            value = chosen[name]
            if isinstance(value, float) and not value.is_integer():
                del chosen[name]
            else:
                chosen[name] = int(value)
    return chosen


def _value(
    name: str, spec: dict[str, Any], task: str, facts: Facts, numbers: dict[str, float | int]
) -> tuple[Any, str]:
    kind = _kind(spec)
    words = set(split_words(name)) | set(split_words(str(spec.get("description", ""))[:60]))
    if "enum" in spec:
        lowered = task.lower()
        for option in spec["enum"]:
            if str(option).lower() in lowered:
                return option, "enum value in the task"
        return None, ""
    if kind in ("integer", "number"):
        return (numbers[name], "number in the task") if name in numbers else (None, "")
    if kind == "array":
        return _numbers(spec, facts)
    if kind != "string":
        return None, ""
    if words & {"url", "link", "website", "endpoint"} and facts.urls:
        return facts.urls.pop(0), "URL in the task"
    if words & {"pattern", "glob"} and facts.patterns:
        return facts.patterns.pop(0), "pattern in the task"
    if words & {"path", "file", "filename", "directory", "folder", "dir"} and facts.paths:
        return facts.paths.pop(0), "path in the task"
    if words & {"date", "day", "when", "time"} and facts.dates:
        return facts.dates.pop(0), "date in the task"
    if facts.quoted:
        return facts.quoted.pop(0), "quoted in the task"
    if facts.names:
        return facts.names.pop(0), "name in the task"
    return None, ""


def _numbers(spec: dict[str, Any], facts: Facts) -> tuple[Any, str]:
    """An array of numbers: every number in the task."""
    values = [value for value, _ in facts.numbers]
    if _kind(spec.get("items") or {}) in ("integer", "number") and values:
        return values, "numbers in the task"
    return None, ""

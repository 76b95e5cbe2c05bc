"""Numbers a task says in words, for step 5 (`arguments`): a span of time without a
number ("for the next week": 7 for a number of days, "over the past decade": 10 for one
in years), how often interest is compounded ("compounded quarterly": 4 times a
year) and one of what a count counts ("one child" for children)."""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.numbering import kind, name_words
from toolrun.selection.text import IRREGULAR_PLURALS, split_words, stem

# ("the last day of the trip" is no span.)
_SPAN = re.compile(
    r"\b(?:next|upcoming|coming|past|last|previous)\s+(week|fortnight|month|year|decade)\b",
    re.I,
)
_DAYS = {"week": 7, "fortnight": 14, "month": 30, "year": 365, "decade": 3650}
# A parameter counts days, weeks… where its name or description says them in the plural
# ("Number of days", "in years"; not "year", nor "Day of the month").
_COUNTED = {f"{unit}s": days for unit, days in {"day": 1, **_DAYS}.items()}
_OFTEN = re.compile(
    r"\b(annually|yearly|semi-?annually|biannually|quarterly|monthly|weekly|daily)\b", re.I
)
_TIMES_A_YEAR = {"annually": 1, "yearly": 1, "semiannually": 2, "semi-annually": 2}
_TIMES_A_YEAR |= {"biannually": 2, "quarterly": 4, "monthly": 12, "weekly": 52, "daily": 365}
# "one child" for a count of children ("two adults and one child"); not "one of".
_ONE = re.compile(r"\bone\s+([a-z]+)\b", re.I)
_MOST = 16  # words of compounding and of frequency looked at: a task names a few


def worded_numbers(card: ToolCard, task: str) -> dict[str, int]:
    """For each whole-number parameter, the number the task says in words, if any: how
    often interest is compounded for one whose name or description says "compound"; a
    span of time for one counted in days, weeks, months or years — the one with the
    largest unit the span holds ("the past decade": 10 years rather than 3650 days); 1
    for a count of what "one" comes before ("one child" for children; not "one year
    from now" for a year, nor "one page at a time" for page_size)."""
    often = _by_nearness(task)
    found: dict[str, int] = {}
    units: dict[str, int] = {}  # a parameter counted in days, weeks…: its unit in days
    for name, spec in card.properties.items():
        if kind(spec) != "integer":
            continue
        words = split_words(f"{name} {spec.get('description', '')}")
        if "compound" in {stem(w) for w in words}:
            if often:
                found[name] = often.pop(0)
        elif "per" not in words and (
            unit := next((_COUNTED[w] for w in words if w in _COUNTED), 0)
        ):
            units[name] = unit
    for match in islice(_ONE.finditer(task), _MOST):  # "two adults and one child"
        counted = stem(match[1].lower())
        for name, spec in card.properties.items():
            if name not in found and _counts(name, spec) and counted in name_words(name):
                found[name] = 1
                break
    for match in islice(_SPAN.finditer(task), _MOST):
        span = _DAYS[match[1].lower()]
        fitting = [name for name, unit in units.items() if unit <= span and name not in found]
        if fitting:
            name = max(fitting, key=units.__getitem__)
            found[name] = round(span / units[name])
    return found


def _counts(name: str, spec: dict[str, Any]) -> bool:
    """Whether a whole-number parameter counts things: its name ends in a plural
    (children, num_adults), or its description says "number of" (not year, page_size)."""
    last = (split_words(name) or [""])[-1]
    plural = last.endswith("s") or last in IRREGULAR_PLURALS
    described = "number of" in str(spec.get("description", "")).lower()
    return kind(spec) == "integer" and (plural or described)


def _by_nearness(task: str) -> list[int]:
    """The times a year of each frequency word in `task`, the nearest to a word of
    compounding first ("$100 monthly, compounded annually": 1 before 12)."""
    compounding = [m.span() for m in islice(re.finditer(r"compound\w*", task, re.I), _MOST)]
    found = [(m.span(), _TIMES_A_YEAR[m[1].lower()]) for m in islice(_OFTEN.finditer(task), _MOST)]
    if compounding:
        found.sort(key=lambda pair: min(_apart(pair[0], span) for span in compounding))
    return [times for _, times in found]


def _apart(one: tuple[int, int], other: tuple[int, int]) -> int:
    """The characters between two spans of a text."""
    return max(other[0] - one[1], one[0] - other[1], 0)

"""Dates as tasks write them ("May 10th, 2020", "March.11, 2022", "15th October,2023",
"2023 April 4th", "2022/08/16", "06-01-2023", "July 2022"), and written back in the
format a parameter's description asks ("in the format MM-DD-YYYY"; ISO where it names
none)."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

MONTHS = [
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
_MONTH = "|".join(f"{name[:3]}(?:{name[3:]})?" for name in MONTHS) + "|sept"
_DIGIT = re.compile(r"\d")
_NUMERIC = re.compile(r"(?<![\w/.-])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\w/-])")
_NUMERIC_YEAR_LAST = re.compile(r"(?<![\w/.-])(\d{1,2})([-/.])(\d{1,2})\2(\d{4})(?![\w/-])")
_BEFORE_YEAR = r"(?:,\s*|\s+)"  # "May 10th, 2020", "15th October,2023", "1st June 2022"
_MONTH_FIRST = re.compile(
    rf"\b({_MONTH})(?![a-z])\.?\s*(\d{{1,2}})(?:st|nd|rd|th)?\b{_BEFORE_YEAR}(\d{{4}})\b", re.I
)
_DAY_FIRST = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?{_BEFORE_YEAR}(\d{{4}})\b", re.I
)
# A year, then a month capitalised ("2023 April 4th"; not "in 2023 may 5 people").
_CAPITALISED = "|".join(f"{name[:3].title()}(?:{name[3:]})?" for name in MONTHS) + "|Sept"
_YEAR_FIRST = re.compile(  # a year of 1900 to 2099: not "order 1234 May 5"
    rf"\b((?:19|20)\d\d),?\s+({_CAPITALISED})(?![a-z])\.?\s*(\d{{1,2}})(?:st|nd|rd|th)?\b"
    r"(?![,.]?\s*\d)"
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})(?![a-z])\.?\s*(\d{{1,2}})(?:st|nd|rd|th)?\b(?![,.]?\s*\d)", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\b\.?,?\s+(\d{{4}})\b", re.I)
# "MM-DD-YYYY", "yyyy/mm/dd", "%Y-%m-%d", "month-day-year" in a description.
_FIELD = r"yyyy|yyy|yy|mm|dd|%Y|%m|%d|year|month|day"
_FORMAT = re.compile(
    rf"(?<![\w%])({_FIELD})([-/.])({_FIELD})(?:\2({_FIELD}))?(?![a-zA-SU-Z\d]|[-/.]\w)", re.I
)


@dataclass(frozen=True)
class Day:
    """A date in a task; `day` is None where only the month is written ("July 2022")."""

    year: int
    month: int
    day: int | None = None

    def written(self, description: str = "") -> str:
        """The date in the format `description` asks, else ISO (YYYY-MM-DD)."""
        found = _FORMAT.search(description)
        if not found:
            return f"{self.year:04d}-{self.month:02d}-{self.day or 1:02d}"
        fields = [f for f in (found[1], found[3], found[4]) if f]
        values = {"y": f"{self.year:04d}", "m": f"{self.month:02d}", "d": f"{self.day or 1:02d}"}
        return found[2].join(values[field.strip("%").lower()[0]] for field in fields)


def dates(text: str) -> tuple[list[Day], str]:
    """The dates in `text`, in order, and `text` with them blanked out."""
    found: list[tuple[int, Day]] = []

    def take(match: re.Match[str], day: Day | None) -> str:
        if day is None:
            return match[0]
        found.append((match.start(), day))
        return " " * len(match[0])  # the same length: later places stay right

    def month(name: str) -> int:
        return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name.lower()[:3]))

    if not _DIGIT.search(text):
        return [], text
    lowered = text.lower()
    named = any(name[:3] in lowered for name in MONTHS)
    text = _NUMERIC.sub(lambda m: take(m, _valid(int(m[1]), int(m[2]), int(m[3]))), text)
    text = _NUMERIC_YEAR_LAST.sub(lambda m: take(m, _month_day(m[1], m[3], m[4])), text)
    if not named:
        return [day for _, day in sorted(found, key=lambda pair: pair[0])], text
    text = _MONTH_FIRST.sub(lambda m: take(m, _valid(int(m[3]), month(m[1]), int(m[2]))), text)
    text = _DAY_FIRST.sub(lambda m: take(m, _valid(int(m[3]), month(m[2]), int(m[1]))), text)
    text = _YEAR_FIRST.sub(lambda m: take(m, _valid(int(m[1]), month(m[2]), int(m[3]))), text)
    text = _MONTH_YEAR.sub(lambda m: take(m, Day(int(m[2]), month(m[1]))), text)
    yearless = [(m, month(m[1]), int(m[2])) for m in _MONTH_DAY.finditer(text)]
    for match, number, day in yearless:  # "April 3rd to April 5th 2023"
        years = sorted(
            found, key=lambda pair: (pair[0] < match.start(), abs(pair[0] - match.start()))
        )
        if years and (found_day := _valid(years[0][1].year, number, day)):
            found.append((match.start(), found_day))
            text = text[: match.start()] + " " * len(match[0]) + text[match.end() :]
    return [day for _, day in sorted(found, key=lambda pair: pair[0])], text


def _month_day(first: str, second: str, year: str) -> Day | None:
    """ "06-01-2023": month first, unless the first cannot be a month."""
    one, other = int(first), int(second)
    if one > 12:
        one, other = other, one
    return _valid(int(year), one, other)


def _valid(year: int, month: int, day: int) -> Day | None:
    """The day, where the calendar has it (not "2023 Feb 30")."""
    try:
        datetime.date(year, month, day)
    except ValueError:
        return None
    return Day(year, month, day)

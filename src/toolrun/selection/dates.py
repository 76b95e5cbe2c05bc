"""Dates as tasks write them ("May 10th, 2020", "March.11, 2022", "15th October,2023",
"2023 April 4th", "2022/08/16", "06-01-2023", "July 2022"), with a time of day written
next to one ("at 8pm", "at 4:30 PM", "at 3 in the afternoon", "16:00"), and written back
in the format a parameter's description asks ("in the format MM-DD-YYYY"; ISO where it
names none; with the time where it asks for one: "YYYY-MM-DDTHH:MM:SS", "dd/mm/yyyy
HH:MM", "such as '2023-04-15T13:45:00Z'")."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, replace

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
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_WEEKDAY = "|".join(WEEKDAYS)
# "today is", "today's date is", then maybe the weekday, right before the date it gives.
_TODAY = re.compile(rf"\btoday(?:'s date)?\s+is\s*(?:({_WEEKDAY}),?\s*)?(?:the\s+)?\Z")
# A day named by how far it is from today (read in lower case).
_RELATIVE = re.compile(
    r"\b(?:(?P<after>the day after tomorrow)|tomorrow"
    rf"|(?:this |the )?(?:upcoming|coming|next) (?P<weekday>{_WEEKDAY}))\b"
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})(?![a-z])\.?\s*(\d{{1,2}})(?:st|nd|rd|th)?\b(?![,.]?\s*\d)", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\b\.?,?\s+(\d{{4}})\b", re.I)
# "MM-DD-YYYY", "yyyy/mm/dd", "%Y-%m-%d", "month-day-year" in a description; a "T" may
# follow, in capitals, before a time ("YYYY-MM-DDTHH:MM:SS").
_FIELD = r"yyyy|yyy|yy|mm|dd|%Y|%m|%d|year|month|day"
_FORMAT = re.compile(
    rf"(?<![\w%])({_FIELD})([-/.])({_FIELD})(?:\2({_FIELD}))?(?!(?-i:[a-zA-SU-Z\d])|[-/.]\w)", re.I
)
# The time a description asks after its date format ("THH:MM:SS", " HH:mm", " %H:%M"), or
# shows in an example ("2023-04-15T13:45:00Z"): the separator, then whether seconds follow.
_TIME_FORMAT = re.compile(r"([T ])(?:hh|%H):(?:mm|%M)(:(?:ss|%S))?", re.I)
_EXAMPLE = re.compile(r"\b\d{4}-\d\d-\d\d([T ])\d\d:\d\d(:\d\d)?(Z)?")
# A time of day right after a date ("at 8pm", ", 4:30 PM", "at 3 in the afternoon",
# "16:00") or right before one ("at 4pm on"): its hour, minutes, and half of the day.
_CLOCK = (
    r"(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d))?"
    r"(?:\s*(?P<half>[ap])\.?m\b\.?|\s+in\s+the\s+(?P<part>morning|afternoon|evening))?"
)
_TIME_AFTER = re.compile(rf",?\s*(?:at\s+|@\s*)?{_CLOCK}", re.I)  # matched where a date ends
_TIME_BEFORE = re.compile(rf"(?:\bat\s+){_CLOCK}\s+on\s*\Z", re.I)


@dataclass(frozen=True)
class Day:
    """A date in a task; `day` is None where only the month is written ("July 2022")."""

    year: int
    month: int
    day: int | None = None
    time: tuple[int, int] | None = None  # hour and minute, where the task gives them

    def written(self, description: str = "") -> str:
        """The date in the format `description` asks, else ISO (YYYY-MM-DD); with its time
        where the task gives one and the description asks for one."""
        found = _FORMAT.search(description)
        if not found:
            return f"{self.year:04d}-{self.month:02d}-{self.day or 1:02d}" + self._clock(
                _EXAMPLE.search(description)
            )
        fields = [f for f in (found[1], found[3], found[4]) if f]
        values = {"y": f"{self.year:04d}", "m": f"{self.month:02d}", "d": f"{self.day or 1:02d}"}
        date = found[2].join(values[field.strip("%").lower()[0]] for field in fields)
        return date + self._clock(_TIME_FORMAT.match(description, found.end()))

    def _clock(self, asked: re.Match[str] | None) -> str:
        """The time as `asked` lays it out (separator, seconds, a "Z"); "" for none."""
        if self.time is None or asked is None:
            return ""
        hour, minute = self.time
        seconds = ":00" if asked[2] else ""
        zone = "Z" if asked.re is _EXAMPLE and asked[3] else ""
        return f"{asked[1]}{hour:02d}:{minute:02d}{seconds}{zone}"


def dates(text: str) -> tuple[list[Day], str]:
    """The dates in `text`, in order, and `text` with them blanked out."""
    found: list[tuple[int, Day]] = []
    ends: dict[int, int] = {}  # where each date found ends, by where it starts

    def take(match: re.Match[str], day: Day | None) -> str:
        if day is None:
            return match[0]
        found.append((match.start(), day))
        ends[match.start()] = match.end()
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
        return _relative(*_timed(found, ends, text))
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
            ends[match.start()] = match.end()
            text = _blanked(text, match.start(), match.end())
    return _relative(*_timed(found, ends, text))


def _timed(
    found: list[tuple[int, Day]], ends: dict[int, int], text: str
) -> tuple[list[tuple[int, Day]], str]:
    """The dates in order with where each starts, each with the time of day written
    right after or before it (blanked out of `text` too, so that its hour is no number
    of the task's)."""
    days = []
    for start, found_day in sorted(found, key=lambda pair: pair[0]):
        day = found_day
        after = _TIME_AFTER.match(text, ends[start])
        before = _TIME_BEFORE.search(text[:start])
        time, span = None, (0, 0)
        if after and (time := _time_of(after)):
            span = (after.start("hour"), after.end())
        elif before and (time := _time_of(before)):
            span = (before.start(), start)
        if time is not None and day.day is not None:
            day = replace(day, time=time)
            text = _blanked(text, *span)
        days.append((start, day))
    return days, text


def _relative(found: list[tuple[int, Day]], text: str) -> tuple[list[Day], str]:
    """The dates in order, with the days a task names by how far they are from a date
    it gives as today's ("tomorrow", "the upcoming Wednesday" beside "today is Monday
    April 24th 2023"). A weekday the task gives for today counts over the calendar's:
    the user says which day they are on."""
    lowered = text.lower()
    today = next(
        (
            (day, said)
            for start, day in found
            if day.day is not None and (said := _TODAY.search(lowered[max(0, start - 30) : start]))
        ),
        None,
    )
    if today is None or not _RELATIVE.search(lowered):
        return [day for _, day in found], text
    day, said = today
    date = datetime.date(day.year, day.month, day.day or 1)
    weekday = WEEKDAYS.index(said[1]) if said[1] else date.weekday()
    counted = list(found)
    for match in _RELATIVE.finditer(lowered):
        if match["after"]:
            ahead = 2
        elif match["weekday"]:
            ahead = (WEEKDAYS.index(match["weekday"]) - weekday - 1) % 7 + 1
        else:
            ahead = 1
        later = date + datetime.timedelta(days=ahead)
        time = None
        if (clock := _TIME_AFTER.match(text, match.end())) and (time := _time_of(clock)):
            text = _blanked(text, clock.start("hour"), clock.end())
        counted.append((match.start(), Day(later.year, later.month, later.day, time)))
    return [day for _, day in sorted(counted, key=lambda pair: pair[0])], text


def _blanked(text: str, start: int, end: int) -> str:
    """`text` with its characters from `start` to `end` spaces (later places stay)."""
    return text[:start] + " " * (end - start) + text[end:]


def _time_of(clock: re.Match[str]) -> tuple[int, int] | None:
    """Hour and minute of a time as `_CLOCK` matched it: "8pm", "4:30 PM", "3 in the
    afternoon", "16:00"; None for a bare number ("May 5, 2023 3 people": no time)."""
    hour, minute = int(clock["hour"]), int(clock["minute"] or 0)
    half = (clock["half"] or "").lower()
    if half or clock["part"]:
        if not 1 <= hour <= 12:
            return None
        evening = half == "p" or clock["part"] in ("afternoon", "evening")
        return (hour % 12 + (12 if evening else 0), minute)
    if clock["minute"] is None or hour > 23:
        return None
    return (hour, minute)


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

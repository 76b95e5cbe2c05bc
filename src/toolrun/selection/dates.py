"""Dates as tasks write them ("May 10th, 2020", "March.11, 2022", "15th October,2023",
"2023 April 4th", "2022/08/16", "06-01-2023", "July 2022", today's as "20230929"), with
a time of day written next to one ("at 8pm", "at 4:30 PM", "at 3 in the afternoon",
"16:00"), and written back in the format a parameter's description asks ("in the format
MM-DD-YYYY"; ISO where it names none; with the time where it asks for one:
"YYYY-MM-DDTHH:MM:SS", "dd/mm/yyyy HH:MM", "such as '2023-04-15T13:45:00Z'"); times of
day written on their own ("leaves around 14:00", "3pm"), written back as a description
of a time alone shows ("such as '18:45'", "e.g. 3pm")."""

from __future__ import annotations

import bisect
import datetime
import re
from dataclasses import dataclass, replace

from toolrun.selection.text import blanked

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
# "today is", "today's date is", then maybe the weekday, right before the date it gives
# (searched for in the _TODAY_REACH characters before a date).
_TODAY = re.compile(rf"\btoday(?:'s date)?\s+is\s*(?:({_WEEKDAY}),?\s*)?(?:the\s+)?\Z")
_TODAY_REACH = 48
# Today's date written as eight digits ("today is 20230929"): only as today's, since an
# eight-digit number elsewhere is as likely an order's or an account's.
_COMPACT_TODAY = re.compile(
    rf"\btoday(?:'s date)?\s+is\s*(?:(?:{_WEEKDAY}),?\s*)?(?:the\s+)?"
    r"((?:19|20)\d\d)(\d\d)(\d\d)(?![\w/-])",
    re.I,
)
# A day named by how far it is from today (read in lower case); "next Tuesday" is the
# first Tuesday after today, as "the coming Tuesday" is.
_RELATIVE = re.compile(
    r"\b(?:(?P<after>(?:the )?day after tomorrow)|tomorrow"
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
# shows in an example ("2023-04-15T13:45:00Z"): the separator, whether seconds follow,
# and for an example whether it ends in "Z". A "Z" among a format's letters
# ("HH:MM:SSZ") is a zone's field, which a task's local time ("4pm London time") does
# not fill.
_TIME_FORMAT = re.compile(r"([T ])(?:hh|%H):(?:mm|%M)(:(?:ss|%S))?", re.I)
_EXAMPLE = re.compile(r"\b\d{4}-\d\d-\d\d([T ])\d\d:\d\d(:\d\d)?(Z)?")
# A time of day right after a date ("at 8pm", ", 4:30 PM", "at 3 in the afternoon",
# "16:00:30") or right before one ("at 4pm on"): its hour, minutes, seconds, and half of
# the day. Only a few spaces or tabs may come between its parts and the date: no line
# break, no date blanked out before it.
_GAP = r"[ \t]{1,3}"
_CLOCK = (
    r"(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d)(?::(?P<second>[0-5]\d))?)?"
    rf"(?:[ \t]?(?P<half>[ap])\.?m\b\.?"
    rf"|{_GAP}in{_GAP}the{_GAP}(?P<part>morning|afternoon|evening))?"
)
_TIME_AFTER = re.compile(rf",?[ \t]{{0,3}}(?:at{_GAP}|@[ \t]?)?{_CLOCK}", re.I)
# The end of a range of times right after a date's time ("16:00 - 18:00", "2pm to 4pm").
_UNTIL = re.compile(rf"[ \t]*(?:-|\u2013|\u2014|to|until|till)(?:{_GAP})?{_CLOCK}(?![\w:])", re.I)
_TIME_BEFORE = re.compile(rf"\bat{_GAP}{_CLOCK}{_GAP}on[ \t]{{0,3}}\Z", re.I)
_BEFORE_REACH = 40  # how far before a date a time "at 4pm on" may start
# A time of day on its own ("leaves around 14:00", "convert 3pm", "at 9:30 a.m.", the end
# of "14:00-16:00"): its minutes or the half of the day make it one (`_time_of`); a bare
# number is none, nor is a zone's offset ("+05:30", "UTC-3:00").
_STANDALONE = re.compile(rf"(?<![\w:./+])(?<![^\W\d_]-){_CLOCK}(?![\w:])", re.I)
# What a description of a time of day alone shows: an example ("18:45", "15:30:00",
# "3pm", "3:30 PM") or a layout ("HH:MM", "hh:mm:ss", "hh:mm AM/PM"); else it may say
# "24-hour format" (not "within 24 hours").
_TIME_ASKED = re.compile(
    r"(?<![\d:+-])(?:\d{1,2}(?P<minutes>:\d\d)?(?P<seconds>:\d\d)?(?:(?P<gap>[ \t]?)"
    r"(?P<half>[ap])\.?m\b)?|hh:mm(?P<layout_seconds>:ss)?(?:(?P<layout_gap>[ \t]?)"
    r"(?P<layout_half>[ap]m)(?:/[ap]m)?)?)",
    re.I,
)
_TWENTY_FOUR_HOURS = re.compile(
    r"\b24(?:h|hr)\b|\b24[- ]?(?:h|hrs?|hours?)[ \t-]+(?:format|clock|time|notation)\b", re.I
)
Clock = tuple[int, int, int]  # hour, minute, second


@dataclass(frozen=True)
class Day:
    """A date in a task; `day` is None where only the month is written ("July 2022")."""

    year: int
    month: int
    day: int | None = None
    time: Clock | None = None  # where the task gives one
    until: Clock | None = None  # the end of a range from `time` ("16:00 - 18:00")

    def written(self, description: str = "") -> str:
        """The date in the format `description` asks, else ISO (YYYY-MM-DD); with its time
        where the task gives one and the description asks for one."""
        found = _FORMAT.search(description)
        if not found:
            example = _EXAMPLE.search(description)
            utc = example is not None and example[3] is not None
            return f"{self.year:04d}-{self.month:02d}-{self.day or 1:02d}" + self._clock(
                example, utc=utc
            )
        fields = [f for f in (found[1], found[3], found[4]) if f]
        values = {"y": f"{self.year:04d}", "m": f"{self.month:02d}", "d": f"{self.day or 1:02d}"}
        date = found[2].join(values[field.strip("%").lower()[0]] for field in fields)
        return date + self._clock(_TIME_FORMAT.match(description, found.end()))

    def _clock(self, asked: re.Match[str] | None, *, utc: bool = False) -> str:
        """The time as `asked` lays it out (`_TIME_FORMAT` or `_EXAMPLE`: its separator,
        then seconds or not), with a "Z" where `utc`; "" for none."""
        if self.time is None or asked is None:
            return ""
        hour, minute, second = self.time
        seconds = f":{second:02d}" if asked[2] else ""
        return f"{asked[1]}{hour:02d}:{minute:02d}{seconds}{'Z' if utc else ''}"


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
        # casefold: the patterns ignore case as Unicode does (a long s, U+017F, is an s)
        return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name.casefold()[:3]))

    if not _DIGIT.search(text):
        return [], text
    lowered = text.lower()
    named = any(name[:3] in lowered for name in MONTHS)
    text = _NUMERIC.sub(lambda m: take(m, _valid(int(m[1]), int(m[2]), int(m[3]))), text)
    text = _NUMERIC_YEAR_LAST.sub(lambda m: take(m, _month_day(m[1], m[3], m[4])), text)
    for match in _COMPACT_TODAY.finditer(text):
        if day := _valid(int(match[1]), int(match[2]), int(match[3])):
            found.append((match.start(1), day))
            ends[match.start(1)] = match.end()
            text = blanked(text, [(match.start(1), match.end())])
    if not named:
        return _relative(*_timed(found, ends, text))
    text = _MONTH_FIRST.sub(lambda m: take(m, _valid(int(m[3]), month(m[1]), int(m[2]))), text)
    text = _DAY_FIRST.sub(lambda m: take(m, _valid(int(m[3]), month(m[2]), int(m[1]))), text)
    text = _YEAR_FIRST.sub(lambda m: take(m, _valid(int(m[1]), month(m[2]), int(m[3]))), text)
    text = _MONTH_YEAR.sub(lambda m: take(m, Day(int(m[2]), month(m[1]))), text)
    # "April 3rd to April 5th 2023": a month and day take the year of the nearest date
    # after them, else before them (one found so is a date for the next ones).
    places = sorted(start for start, _ in found)
    by_place = dict(found)
    spans = []
    for match in _MONTH_DAY.finditer(text):
        at = bisect.bisect_left(places, match.start())
        nearest = places[at] if at < len(places) else places[at - 1] if places else None
        if nearest is not None and (
            day := _valid(by_place[nearest].year, month(match[1]), int(match[2]))
        ):
            found.append((match.start(), day))
            bisect.insort(places, match.start())
            by_place[match.start()] = day
            ends[match.start()] = match.end()
            spans.append(match.span())
    return _relative(*_timed(found, ends, blanked(text, spans)))


def clocks(text: str) -> list[Clock]:
    """The times of day `text` writes on their own (run after `dates`, which takes those
    next to a date), in order."""
    if not _DIGIT.search(text):
        return []
    found = (_time_of(match) for match in _STANDALONE.finditer(text))
    return [time for time in found if time is not None]


def time_written(time: Clock, description: str) -> str | None:
    """`time` written as a parameter for a time of day alone asks: in its example's or
    layout's shape ("18:45", "15:30:00", "3pm", "3:30 PM", "hh:mm AM/PM"), else hours and
    minutes ("24-hour format"); None where the description asks for a date (with a time
    or not) or shows no time of day."""
    if _FORMAT.search(description) or _EXAMPLE.search(description):
        return None
    asked = next((m for m in _TIME_ASKED.finditer(description) if _shows_time(m)), None)
    if asked is None and not _TWENTY_FOUR_HOURS.search(description):
        return None
    hour, minute, second = time
    if asked is None:
        return f"{hour:02d}:{minute:02d}"
    layout = asked[0].lower().startswith("hh")
    seconds = f":{second:02d}" if asked["seconds"] or asked["layout_seconds"] else ""
    half = asked["half"] or (asked["layout_half"] or "")[:1]
    if not half:
        return f"{hour:02d}:{minute:02d}{seconds}"
    minutes = f":{minute:02d}{seconds}" if asked["minutes"] or layout or minute else ""
    gap = asked["gap"] or asked["layout_gap"] or ""
    letters = "pm" if hour >= 12 else "am"
    return f"{hour % 12 or 12}{minutes}{gap}{letters.upper() if half.isupper() else letters}"


def _shows_time(asked: re.Match[str]) -> bool:
    """Whether a match of `_TIME_ASKED` is a time of day: minutes, a half of the day or a
    layout ("2" alone is a number)."""
    return bool(asked["minutes"] or asked["half"] or asked[0].lower().startswith("hh"))


def _timed(
    found: list[tuple[int, Day]], ends: dict[int, int], text: str
) -> tuple[list[tuple[int, Day]], str]:
    """The dates in order with where each starts, each with the time of day written
    right after or before it (blanked out of `text` too, so that its hour is no number
    of the task's)."""
    days = []
    for start, found_day in sorted(found, key=lambda pair: pair[0]):
        day = found_day
        if day.day is not None:
            time, text, clock_end = _time_after(text, ends[start])
            until = _until(text, clock_end, time)
            if time is None:
                time, text = _time_before(text, start)
            if time is not None:
                day = replace(day, time=time, until=until)
        days.append((start, day))
    return days, text


def _time_after(text: str, place: int) -> tuple[Clock | None, str, int]:
    """The time of day written at `place` (where a date ends), `text` without it, and
    where it ends (`place` where there is none)."""
    clock = _TIME_AFTER.match(text, place)
    time = _time_of(clock) if clock else None
    if clock is None or time is None:
        return None, text, place
    return time, blanked(text, [(clock.start("hour"), clock.end())]), clock.end()


def _until(text: str, place: int, time: Clock | None) -> Clock | None:
    """The end of a range of times written right after `time`, which ends at `place`:
    "16:00 - 18:00", "at 4pm to 6pm"; None where none is, or it is no later (the range
    would run past midnight)."""
    if time is None:
        return None
    ended = _UNTIL.match(text, place)
    until = _time_of(ended) if ended else None
    return until if until is not None and until > time else None


def _time_before(text: str, start: int) -> tuple[Clock | None, str]:
    """The time of day written just before `start` ("at 4pm on"), and `text` without it."""
    clock = _TIME_BEFORE.search(text, max(0, start - _BEFORE_REACH), start)
    time = _time_of(clock) if clock else None
    if clock is None or time is None:
        return None, text
    return time, blanked(text, [(clock.start(), start)])


def _relative(found: list[tuple[int, Day]], text: str) -> tuple[list[Day], str]:
    """The dates, with the days a task names by how far they are from a date it gives
    as today's ("tomorrow", "the upcoming Wednesday" beside "today is Monday April 24th
    2023"). The days counted and the other dates come in the task's order, today's date
    after them all: it says when the task is asked, not what it asks for."""
    lowered = text.lower()
    today = _today(found, lowered) if _RELATIVE.search(lowered) else None
    if today is None:
        return [day for _, day in found], text
    start, date, weekday = today
    counted = []
    for match in _RELATIVE.finditer(lowered):
        if (later := _counted(match, date, weekday)) is not None:
            time, text, _ = _time_after(text, match.end())
            counted.append((match.start(), Day(later.year, later.month, later.day, time)))
    others = [pair for pair in found if pair[0] != start]
    ordered = sorted(counted + others, key=lambda pair: pair[0])
    return [day for _, day in ordered] + [day for place, day in found if place == start], text


def _today(found: list[tuple[int, Day]], lowered: str) -> tuple[int, datetime.date, int] | None:
    """The first date the task gives as today's: where it starts, the date, and its
    weekday — the one the task names with it, else the calendar's (the user says which
    day they are on)."""
    for start, day in found:
        said = _TODAY.search(lowered, max(0, start - _TODAY_REACH), start)
        if said and day.day is not None:
            date = datetime.date(day.year, day.month, day.day)
            return start, date, WEEKDAYS.index(said[1]) if said[1] else date.weekday()
    return None


def _counted(match: re.Match[str], today: datetime.date, weekday: int) -> datetime.date | None:
    """The day `match` (of _RELATIVE) names, counted from `today` (whose weekday is
    `weekday`); None past the calendar's end."""
    if match["after"]:
        ahead = 2
    elif match["weekday"]:
        ahead = (WEEKDAYS.index(match["weekday"]) - weekday - 1) % 7 + 1
    else:
        ahead = 1
    try:
        return today + datetime.timedelta(days=ahead)
    except OverflowError:
        return None


def _time_of(clock: re.Match[str]) -> Clock | None:
    """A time as `_CLOCK` matched it: "8pm", "4:30 PM", "3 in the afternoon", "16:00:30";
    None for a bare number ("May 5, 2023 3 people": no time)."""
    hour, minute = int(clock["hour"]), int(clock["minute"] or 0)
    second = int(clock["second"] or 0)
    half = (clock["half"] or "").lower()
    if half or clock["part"]:
        if not 1 <= hour <= 12:
            return None
        evening = half == "p" or clock["part"] in ("afternoon", "evening")
        return (hour % 12 + (12 if evening else 0), minute, second)
    if clock["minute"] is None or hour > 23:
        return None
    return (hour, minute, second)


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

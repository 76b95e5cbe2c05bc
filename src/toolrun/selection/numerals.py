"""The numbers a task writes (for `facts`), each with the words just before and after
it: digits with their thousands' commas, scales ("1.2 million", "$300K"), percentages,
spelt numbers ("three"), the headings of coordinates ("33.4 N")."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import takewhile

from toolrun.selection.text import NUMBER_WORDS, STOP_WORDS, split_words, stem

_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9}
# Not a digit after "^" or "**" (an exponent: "m/s^2"); "1e-9" is one number ("6E123" a code).
_NUMBER = re.compile(
    r"(?P<money>\$\s?)?(?<![\w.^])(?<!\*\*)"
    r"(?P<value>-?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"(?![\w.]*\d)"
    r"(?:\s*(?P<scale>thousand|million|billion|trillion)\b|(?P<suffix>[KMB]|(?<=\d)[kmb](?=\W|$))"
    r"(?![A-Za-z/]))?(?P<percent>\s?%)?"
)
_IN_WORDS_PERCENT = re.compile(r"\s*(?:percent|per\s+cent)\b", re.I)  # "60 percent" as "60%"
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b(?!-)", re.I)
# Between two numbers of one run: "12, 24 and 36", "(33.4 N, 112.0 W)".
_RUN_GAP = re.compile(r"\s*(?:[NSEW]\b\s*)?(?:,\s*(?:and\s+)?|and\s+)")
_HEADING = re.compile(r"\s*(?:°\s*)?([NSEW])\b")  # one way to split the spaces: linear
_UNIT = re.compile(r" ?([µμΩ]?[A-Za-zµμΩ]+)(?![\w/^]| ?/| per\b)")
_CLAUSE_END = re.compile(r"[,;:!?()]|\.(?!\d)|\band\b|\bor\b")
# A time of day written with a colon, from its hour: "15:39", "09:16:05", "3:30 pm".
_CLOCK = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d:])(?:\s?[ap]\.?m\b\.?)?", re.I)

NEAR_BEFORE = 6  # words before a value that may name it (a list's: further)
NEAR_AFTER = 2  # … and after it ("440 Hz", "5 seconds")
_WORDS_SPAN = 100  # characters around a number that hold the words near it


@dataclass
class Number:
    """A number in the task, the stems of the words just before and after it."""

    value: float | int
    before: list[str]
    after: list[str]
    percent: bool = False
    run: int = 0  # numbers written as one list ("12, 24 and 36") share it
    spelt: bool = False  # written as a word ("three")
    heading: str = ""  # N, S, E or W after a coordinate
    money: bool = False
    unit: str = ""  # as written right after it: "km", "µF", "minutes"
    quoted: str = ""  # the quote it is, as written ('ID "87"': "87")
    clock: str = ""  # the time of day whose hour it is, as written ("15:39", "3:30 pm")
    in_clock: bool = False  # a time of day's minutes or seconds

    @property
    def year_like(self) -> bool:
        """A calendar year ("in 2020"): a four-digit whole number, no money or percent."""
        plain = not (self.money or self.percent or self.spelt)
        return plain and isinstance(self.value, int) and 1000 <= self.value <= 2999


_MOST_DIGITS = 100


def numbers(text: str, quotes: Mapping[int, str] | None = None) -> list[Number]:
    """The numbers in `text`: "1,200" is 1200, "$1.2M" and "1.2 million" 1200000, "three"
    3; "300K" is a temperature, "$300K" money. `quotes`: the quotes that are numbers, by
    where they start (each such number notes its quote)."""
    quotes = quotes or {}
    found: list[Number] = []
    spelt: set[int] = set()
    lowered = text.lower()
    if any(word in lowered for word in NUMBER_WORDS):
        spelt = {m.start() for m in _NUMBER_WORD.finditer(text)}
        text = _NUMBER_WORD.sub(lambda m: str(NUMBER_WORDS[m[0].lower()]).ljust(len(m[0])), text)
    run, last_end = 0, None
    times = list(_CLOCK.finditer(text)) if ":" in text else []  # once per text
    places: list[tuple[int, int]] = []  # each number's start, and its unit's end
    for match in _NUMBER.finditer(text):
        digits = match["value"].replace(",", "")
        if len(digits) > _MOST_DIGITS:
            continue  # no parameter's number (and past Python's int-string limit)
        value: float | int = (
            float(digits) if "." in digits or "e" in digits.lower() else int(digits)
        )
        scale = _SCALES.get((match["scale"] or "").lower())
        end = match.end()
        if match["suffix"]:
            if match["money"] or match["suffix"] in "MB":
                scale = _SUFFIXES[match["suffix"].lower()]
            else:  # "1.75m", "300K": a unit, no scale
                end = match.start("suffix")
        if scale:
            value = _scaled(value, scale)
        if not math.isfinite(value):  # "1e400", "1e300 trillion": no parameter's number
            continue
        if last_end is None or not _RUN_GAP.fullmatch(text[last_end : match.start()]):
            run += 1
        last_end = end
        heading = _HEADING.match(text, end)
        before = split_words(text[max(match.start() - _WORDS_SPAN, 0) : match.start()])
        before = before[-NEAR_BEFORE:]
        after_text = _CLAUSE_END.split(text[end : end + _WORDS_SPAN], maxsplit=1)[0]
        after = list(takewhile(_unit_word, split_words(after_text)))[:NEAR_AFTER]
        unit = _UNIT.match(text, end)
        places.append((match.start(), unit.end() if unit else end))
        clock = _clock_holding(times, match.start())
        hour = clock is not None and clock.start() == match.start()
        found.append(
            Number(
                value,
                [stem(w) for w in before if not w.isdigit()],
                [stem(w) for w in after],
                bool(match["percent"]) or _IN_WORDS_PERCENT.match(text, end) is not None,
                run,
                match.start("value") in spelt,
                heading[1] if heading else "",
                bool(match["money"]),
                unit[1] if unit else "",
                quotes.get(match.start(), ""),
                clock[0] if clock is not None and hour else "",
                clock is not None and not hour,
            )
        )
    _join_feet_and_inches(found, places, text)
    if {n.heading for n in found} & {"N", "S"} and {n.heading for n in found} & {"E", "W"}:
        for number in found:  # a coordinate south or west is negative
            if number.heading in ("S", "W"):
                number.value = -number.value
    return found


def _clock_holding(times: list[re.Match[str]], start: int) -> re.Match[str] | None:
    """The time of day of `times` (in order, apart) that the number at `start` is part
    of (its hour, minutes or seconds), if any: found by halving, not one by one (a task
    of 16,000 times took 14 s)."""
    last = bisect.bisect_right(times, start, key=lambda time: time.start()) - 1
    return times[last] if last >= 0 and start < times[last].end() else None


_FEET = frozenset({"ft", "foot", "feet"})
_INCHES = frozenset({"in", "inch", "inches"})


def _join_feet_and_inches(found: list[Number], places: list[tuple[int, int]], text: str) -> None:
    """A height in feet and inches ("5ft 10in", "5 feet 10 inches") as one number of
    inches (70)."""
    for at in range(len(found) - 2, -1, -1):
        feet, inches = found[at], found[at + 1]
        between = text[places[at][1] : places[at + 1][0]]
        apart = between.strip(" \t") or inches.value < 0  # "5 ft,\n10 in", "5ft -2in"
        if feet.unit.lower() in _FEET and inches.unit.lower() in _INCHES and not apart:
            feet.value = feet.value * 12 + math.copysign(inches.value, feet.value)
            if float(feet.value).is_integer():
                feet.value = int(feet.value)
            feet.unit, feet.after = "inches", inches.after
            del found[at + 1]


def _unit_word(word: str) -> bool:
    """A word that may still name the number before it ("5 seconds", "20 m/s"): the
    words right after a number up to a stop word or another number."""
    return not word.isdigit() and word not in STOP_WORDS


def _scaled(value: float | int, scale: int) -> float | int:
    scaled = value * scale
    return int(scaled) if math.isfinite(scaled) and float(scaled).is_integer() else scaled

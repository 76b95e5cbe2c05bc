"""Which number of a task goes to which numeric parameter (step 5): each to the parameter
the words around it name best — a word of its name just before it ("height 5", "speed
of 20") or after it ("440Hz frequency"), a unit its description names just after it ("5
seconds" for a duration in seconds), N/S and E/W to a latitude and a longitude — the rest
in order to required parameters; a "10 to 20" range to a start and a count; "5%" as 0.05
where the parameter takes a decimal, "5 km" as 5000 where it is in meters."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import Facts
from toolrun.selection.numerals import Number
from toolrun.selection.phrases import MEASURES
from toolrun.selection.text import STOP_WORDS, split_words, stem
from toolrun.selection.unitsizes import UNITS, converted

# A body that starts at rest: its initial velocity is 0 (`_at_rest`); not "dropped off".
_AT_REST = re.compile(r"\b(?:from|at) rest\b|\bdropped (?:from|off of)\b|\bfree[- ]fall", re.I)
# A speed the task gives ("at 5 m/s", "15 meters per second"; not an acceleration, "9.8
# m/s^2", "per second squared").
_A_SPEED = re.compile(
    r"\d\s*(?:(?:m|km|ft|mi)\s*/\s*(?:s|h|hr)|kph|mph|knots?|kmh"
    r"|(?:meters?|metres?|kilometers?|kilometres?|km|miles?|feet|foot|ft)\s+(?:per|an?)\s+"
    r"(?:second|sec|hour|hr|minute|min)s?)\b(?!\s*(?:\^|\*\*|²|2\b|squared))",
    re.I,
)
_INITIAL = frozenset(stem(w) for w in ("initial", "start", "starting"))
_SPEEDS = frozenset(stem(w) for w in ("velocity", "speed"))
AT_REST = "at rest in the task"
# A description saying a rate is given as a decimal: "5%" is then 0.05.
_AS_DECIMAL = re.compile(r"\bdecimal\b|\bfraction\b|(?:from|between) 0 (?:to|and) 1\b", re.I)
_IN_PERCENT = re.compile(r"percent|%|pct\b", re.I)
# Parameter words that take the start, and the length, of a "10 to 20" range.
_START = frozenset({"offset", "start", "begin", "from", "first"})
_COUNT = frozenset({"limit", "count", "length", "size", "max", "number", "num", "n"})
# Words before a number that make it a count ("the first 20 lines").
_COUNTING = frozenset({"first", "top", "last"})
# A number of stars ("4.5 stars or more") is a rating: for a parameter named with one of
# these words as written (not "interest_rate").
_RATINGS = frozenset({"rating", "ratings", "score", "stars", "star"})
# A parameter named for a percentage (its name's stems), which a number with "%" fits.
_PERCENTS = frozenset({"percent", "percentag", "pct"})
# Words after "year" in the name of a parameter for a calendar year: year_from,
# year_of_birth, yearBuilt (not year1_revenue).
_YEAR_ROLES = frozenset(
    {"from", "to", "start", "end", "min", "max", "of", "birth", "built", "made", "founded"}
    | {"released", "published", "begin", "first", "last", "since", "until"}
)
# The last word of a parameter's name that makes it a span of time, which no sum of
# money is.
_SPANS = frozenset(
    {"year", "years", "month", "months", "week", "weeks", "day", "days", "hour", "hours"}
    | {"minute", "minutes", "second", "seconds", "time", "duration", "period", "term"}
)
_BEFORE = (3.0, 2.5, 2.0, 1.5)  # a name word 1, 2, 3 or 4 words before the number
_AFTER_NAME = (3.0, 2.0)  # a name word 1 or 2 words after it
_AFTER_UNIT = (2.0, 1.5)  # a description word (a unit) 1 or 2 words after it
_ENOUGH = 1.5
_PARALLEL = 5.0  # a number of a pair written after its parameter's word in a pair
# The source of a required parameter's number that no words name: the first one left.
LEFT_NUMBER = "a number left in the task"
# What a rate is per, which is no unit of its number: "miles per gallon" takes "20 miles",
# not "20 gallons", nor is "miles per year" one ("per" is none either).
_PER_UNIT = re.compile(r"\bper\s+\w+", re.I)
# Rates written short after a number ("20 mpg") that a description writes out.
_RATE_ABBREVIATIONS = {
    "mpg": ("miles per gallon",),
    "mph": ("miles per hour",),
    "kph": ("kilometers per hour", "kilometres per hour"),
    "rpm": ("revolutions per minute",),
    "bpm": ("beats per minute",),
    "wpm": ("words per minute",),
}
_COUNTS_ITS_THING = 3.0  # a number just before what a count parameter counts
# … where its name says it counts: "3 samples of size 100" is no sample_size of 3.
_COUNTS_THINGS = _COUNT - {"size", "length"}
# Words after a number that say what it counts or measures: "3 hours", "2 times" (the
# units `unitsizes` knows and the measures `phrases` knows), "4 tickets".
_MORE_COUNTED = ("ticket", "seat", "item", "piec")
_COUNTED = frozenset(stem(word) for word in (*UNITS, *MEASURES)) | set(_MORE_COUNTED)
_DEFAULT = re.compile(r"\b(?:defaults?|by default)\b(?:[^.;]|\.\d)*", re.I)
_DAY_HOURS = re.compile(r"\b24[- ]?hours?\b", re.I)  # "in 24 hour format", "24-hour clock"
# Name words of a lower and an upper bound.
_LOW = frozenset(stem(w) for w in ("min", "minimum", "lowest", "lower", "least"))
_HIGH = frozenset(stem(w) for w in ("max", "maximum", "highest", "upper", "most"))
# Name words of a count of some of a whole's members, and of the whole's count: the
# part is never the larger ("successes" of "trials", "hits" of "attempts").
_PARTS = frozenset(stem(w) for w in ("success", "successes", "favorable", "favourable", "hits"))
_WHOLES = frozenset(stem(w) for w in ("trial", "trials", "attempts", "experiments"))
_SHARES = frozenset(stem(w) for w in ("prob", "probability", "rate", "ratio", "percent", "p"))
# Words that may stand between a parameter's name and its value: "rate of 5", "the
# subject is 'Hi'", "titled as 'Notes'".
LINKING = frozenset(
    {"a", "an", "the", "of", "is", "are", "was", "be", "being", "to", "as", "at", "by"}
    | {"for", "with", "equal", "equals", "set", "called", "named", "should", "value", "valu"}
)


def kind(spec: dict[str, Any]) -> str:
    found = spec.get("type", "string")
    return found[0] if isinstance(found, list) and found else str(found)


@lru_cache(maxsize=4096)
def name_words(name: str) -> frozenset[str]:
    """The stems of a parameter name's words (digits and stop words aside)."""
    found = [w for w in split_words(name) if not w.isdigit()]
    return frozenset(stem(w) for w in [w for w in found if w not in STOP_WORDS] or found)


def assign_numbers(
    card: ToolCard, facts: Facts, meant: Mapping[str, int] | None = None
) -> dict[str, tuple[float | int, str]]:
    """The task's numbers for `card`'s numeric parameters; those no parameter took are
    left in `facts.numbers`. `meant`: a number for a parameter by what the task names
    ("ironing" for "2 for ironing service"), which a number the words around it name
    for the parameter ("page 5") outweighs, unless that one counts something else
    ("service, 3 hours"), and which outweighs the rest in order."""
    specs = card.properties
    names = [p for p in specs if kind(specs[p]) in ("integer", "number")]
    resting = _at_rest(names, facts)
    names = [name for name in names if name not in resting]
    chosen, left = _range(names, facts)
    chosen |= dict.fromkeys(resting, (0, AT_REST))
    chosen |= _bounds(names, card, left)
    meant = meant or {}
    scores = {
        (place, name): score
        for (place, name), score in _scores(
            [n for n in names if n not in chosen], card, left
        ).items()
        if name not in meant or not _counts_another(left[place], name, specs[name])
    }
    taken: dict[str, int] = {}  # a parameter's number, by its place in `left`
    for (place, name), _ in sorted(scores.items(), key=lambda pair: (-pair[1], pair[0][0])):
        if name not in taken and place not in taken.values():
            taken[name] = place
    _keep_order(taken, scores, names)
    for name, place in taken.items():
        if (value := _fitted(left[place], name, specs[name])) is not None:
            chosen[name] = (value, "number in the task")
            quote = left[place].quoted
            if quote and quote in facts.quoted:  # given as a number, not as text too
                facts.quoted.remove(quote)
    for name, code in meant.items():
        chosen.setdefault(name, (code, "number the task names by its meaning"))
    rest = [number for place, number in enumerate(left) if place not in taken.values()]
    rest.sort(key=lambda number: number.spelt)  # "two numbers: 40 and 50"
    for name in [n for n in names if n not in chosen and n in card.required]:
        for number in [n for n in rest if not n.quoted]:  # a quote only where named
            if (value := _fitted(number, name, specs[name])) is not None:
                chosen[name] = (value, LEFT_NUMBER)
                rest.remove(number)
                break
    facts.numbers[:] = rest
    _part_within_whole(chosen)
    return chosen


def _at_rest(names: list[str], facts: Facts) -> list[str]:
    """The parameters for an initial velocity where the task says the body starts at
    rest ("accelerated from rest", "dropped from 100 m") and gives no number for a
    velocity ("dropped at 5 m/s" does)."""
    if not _AT_REST.search(facts.whole) or _A_SPEED.search(facts.whole):
        return []
    if any(_SPEEDS & {*number.before[-3:], *number.after} for number in facts.numbers):
        return []
    return [n for n in names if name_words(n) & _INITIAL and name_words(n) & _SPEEDS]


def _counts_another(number: Number, name: str, spec: dict[str, Any]) -> bool:
    """Whether the word right after `number` says what it counts or measures, and that
    is not what the parameter `name` is: "3 hours" is no service's id however near
    "service" is ("service 3 tomorrow" is)."""
    if not number.after or number.after[0] not in _COUNTED:
        return False
    return number.after[0] not in _described(str(spec.get("description", ""))) | name_words(name)


def _scores(
    names: list[str], card: ToolCard, numbers: list[Number]
) -> dict[tuple[int, str], float]:
    """How well each number (by its place) fits each parameter, where well enough."""
    scores = {}
    for name in names:
        spec, words = card.properties[name], name_words(name)
        named = words | (_COUNTING if words & _COUNT else set())
        described = _described(str(spec.get("description", ""))) | words
        for place, number in enumerate(numbers):
            if _fitted(number, name, spec) is None:
                continue
            if number.quoted and not named & {*number.before[-len(_BEFORE) :], *number.after}:
                continue  # a quoted number only for a parameter the words around name
            # "three sides" counts side1, side2 and side3: it is none of them
            counted = name[-1].isdigit() and bool(set(number.after) & words)
            # "10 years" is no count per year (compounds_per_year): it spans years
            counted = counted or number.after[:1] == [_per(name)]
            score = 0.0 if counted else _score(number, named, described)
            if words & _COUNTS_THINGS and set(number.after[:2]) & (words - _COUNT):
                score = max(score, _COUNTS_ITS_THING)  # "three traits" for trait_count
            score += _heading(number, words)
            if number.year_like and _calendar_year(name):
                score += 2.0  # "in 2020" for a year (not for year1_revenue)
            if number.after[:1] == ["star"] and _RATINGS.intersection(split_words(name)):
                score += 2.0
            if number.percent and (words & _PERCENTS or "percent" in described):
                score += 2.0  # "by 10%" for a "…_percentage", or one "in percentage"
            if score >= _ENOUGH:
                scores[place, name] = score
    for place, name in _in_parallel(names, numbers):
        number, spec = numbers[place], card.properties[name]
        if not number.quoted and _fitted(number, name, spec) is not None:
            scores[place, name] = max(scores.get((place, name), 0.0), _PARALLEL)
    return scores


def _in_parallel(names: list[str], numbers: list[Number]) -> list[tuple[int, str]]:
    """Two numbers written as a pair after two parameters' words written as one ("its
    base and height as 6cm and 10cm", "width and height are 20 and 30"): the first to
    the first, the second to the second (by their places)."""
    pairs = []
    for place, (first, second) in enumerate(itertools.pairwise(numbers)):
        unit = first.after[:1] or first.before[-1:]
        if second.before[-2:] != [*unit, "and"][-2:] or len(second.before) < 2:
            continue
        words = list(first.before)
        while words and words[-1] in LINKING:
            words.pop()
        if len(words) < 3 or words[-2] != "and":
            continue
        owners = [[n for n in names if word in name_words(n)] for word in (words[-3], words[-1])]
        if all(len(owner) == 1 for owner in owners) and owners[0] != owners[1]:
            pairs += [(place, owners[0][0]), (place + 1, owners[1][0])]
    return pairs


def _score(number: Number, named: frozenset[str], described: frozenset[str]) -> float:
    """How well the words around `number` name a parameter: its name words just before
    and after it — the more of them the better; worth less where other words stand
    between and the number's own unit names something else — and each of its
    description's words (units) just after it."""
    before = list(reversed(number.before[-len(_BEFORE) :]))
    after = number.after[: len(_AFTER_NAME)]
    score = 0.0
    for distance, word in enumerate(before, 1):
        if word in named:
            score = _BEFORE[distance - 1]
            loose = not set(before[: distance - 1]) <= LINKING
            if loose and after and not set(after) & described:
                score /= 2
            break
    for distance, word in enumerate(after, 1):
        if word in named:
            score = max(score, _AFTER_NAME[distance - 1])
            break
    said = named & {*before, *after}
    score *= 0.5 + 0.5 * len(said) / max(len(named), 1)
    if number.spelt:  # "two charges" counts them: only a name names it ("top five")
        return score
    units = [_AFTER_UNIT[d] for d, word in enumerate(after) if word in described - named]
    return score + sum(units)  # "400 square feet" fits "square feet" better than "feet"


def _keep_order(
    taken: dict[str, int], scores: dict[tuple[int, str], float], names: list[str]
) -> None:
    """Swap two parameters' numbers where that keeps the task's order at no loss ("440Hz
    and 880Hz" to the first and the second frequency)."""
    ordered = sorted(taken, key=names.index)
    for one, other in [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]:
        mine, theirs = taken[one], taken[other]
        if mine > theirs:
            now = scores[mine, one] + scores[theirs, other]
            swapped = scores.get((theirs, one), 0.0) + scores.get((mine, other), 0.0)
            if swapped >= now - 1e-9:
                taken[one], taken[other] = theirs, mine


def _part_within_whole(chosen: dict[str, tuple[float | int, str]]) -> None:
    """Swap a count of some of a whole's members and the whole's count where the part
    took the larger ("5 heads in 10 tosses": 5 successes of 10 trials)."""
    counts = [n for n in chosen if not name_words(n) & _SHARES]  # not prob_success
    for part in [n for n in counts if name_words(n) & _PARTS]:
        for whole in [n for n in counts if name_words(n) & _WHOLES]:
            if chosen[part][0] > chosen[whole][0]:
                chosen[part], chosen[whole] = chosen[whole], chosen[part]


def _heading(number: Number, words: frozenset[str]) -> float:
    """A coordinate's heading names a latitude (N, S) or a longitude (E, W)."""
    if number.heading in ("N", "S") and any(w.startswith("lat") for w in words):
        return 3.0
    if number.heading in ("E", "W") and any(w.startswith(("lon", "lng")) for w in words):
        return 3.0
    return 0.0


@lru_cache(maxsize=4096)
def _described(description: str) -> frozenset[str]:
    """The words of a description that may be a number's unit, and the short forms of the
    rates it writes out ("mpg" for "miles per gallon"); not those of its default
    ("Default is 9.8 m/s^2" says nothing of the value asked for), nor what a rate is per."""
    own = _DEFAULT.sub(" ", description)
    lowered = own.lower()
    short = {
        short
        for short, written in _RATE_ABBREVIATIONS.items()
        if any(w in lowered for w in written)
    }
    words = split_words(_PER_UNIT.sub(" ", own))
    stems = {stem(w) for w in words if w not in STOP_WORDS and not w.isdigit()}
    if "percentag" in stems:  # "60 percent" for "the level in percentage"
        stems.add("percent")
    return frozenset(stems | short)


def _range(
    names: list[str], facts: Facts
) -> tuple[dict[str, tuple[float | int, str]], list[Number]]:
    """A "10 to 20" range as a start and a count (10 and 11), where the tool takes both."""
    start = next((n for n in names if name_words(n) & _START), None)
    count = next((n for n in names if name_words(n) & _COUNT), None)
    if not (facts.range and start and count):
        return {}, list(facts.numbers)
    first, last = facts.range
    left = [n for n in facts.numbers if n.value not in (first, last)]
    return {
        start: (first, "range in the task"),
        count: (last - first + 1, "range in the task"),
    }, left


def _bounds(
    names: list[str], card: ToolCard, numbers: list[Number]
) -> dict[str, tuple[float | int, str]]:
    """The two numbers of a "$300,000 to $400,000" or "between 2 and 5" span, the lower
    to a lower bound's parameter (min_…, lowest) and the higher to an upper bound's
    (max_…, highest) of the same thing (min_price and max_price, not min_rating and
    max_price), each as that parameter takes it; taken from `numbers`."""
    low = next((n for n in names if name_words(n) & _LOW), None)
    high = next((n for n in names if name_words(n) & _HIGH), None)
    if not (low and high) or name_words(low) - _LOW != name_words(high) - _HIGH:
        return {}
    if (found := span(numbers)) is None:
        return {}
    lower, higher = sorted(found, key=lambda number: number.value)
    low_value = _fitted(lower, low, card.properties[low])
    high_value = _fitted(higher, high, card.properties[high])
    if low_value is None or high_value is None:
        return {}
    for number in found:
        numbers.remove(number)
    return {low: (low_value, "span in the task"), high: (high_value, "span in the task")}


def span(numbers: list[Number]) -> tuple[Number, Number] | None:
    """The first two of `numbers` the task joins as a span ("$300,000 to $400,000",
    "from 2015 to 2021", "between 100 and 250"; "and" only after "between")."""
    for first, second in itertools.pairwise(numbers):
        joined = first.unit.lower()  # the word right after it
        if second.before[-1:] != [joined]:
            continue
        if joined == "to" or (joined == "and" and first.before[-1:] == ["between"]):
            return first, second
    return None


@lru_cache(maxsize=4096)
def _per(name: str) -> str | None:
    """The stem of the word after "per" in a parameter's name (compounds_per_year: year)."""
    words = split_words(name)
    return next((stem(w) for before, w in itertools.pairwise(words) if before == "per"), None)


@lru_cache(maxsize=4096)
def _calendar_year(name: str) -> bool:
    """Whether a parameter is named for a calendar year: year, year1, start_year,
    birthYear, year_from, year_of_birth (not years, year1_revenue, compounds_per_year)."""
    words = [w for w in split_words(name) if not w.isdigit()]
    if "year" not in words or "per" in words:
        return False
    return set(words[words.index("year") + 1 :]) <= _YEAR_ROLES


@lru_cache(maxsize=4096)
def _span_of_time(name: str) -> bool:
    """Whether a parameter is named for a span of time: years, time_years, term (not
    year1_revenue, cost_per_day)."""
    words = [w for w in split_words(name) if not w.isdigit()]
    return bool(words) and words[-1] in _SPANS and "per" not in words


def _year_at_all(number: Number) -> bool:
    """Whether `number` may be a year: whole, no money or percent ("year 300" may)."""
    whole = float(number.value).is_integer() and abs(number.value) < 10_000
    return whole and not (number.money or number.percent)


def _fitted(number: Number, name: str, spec: dict[str, Any]) -> float | int | None:
    """`number` as the parameter takes it: a percentage as a decimal where it asks for one
    (or takes a fraction and says nothing of percent); in the unit its description names
    ("5 km" for meters: 5000); None for a fraction an integer cannot take, for a sum of
    money where it is a span of time, and for any but a calendar year where it is one; an
    hour after noon as 13 to 23 (and "12 am" as 0) where it asks for 24-hour time."""
    if number.money and _span_of_time(name):
        return None  # "$5000 for 10 years": not 5000 years (year1_revenue, cost_per_day may)
    if _calendar_year(name) and not _year_at_all(number):
        return None  # year2 is a year ("in 2020"), not year2_revenue's "$1.2M"
    value = number.value
    description = str(spec.get("description", ""))
    if number.percent and (
        _AS_DECIMAL.search(description)
        or (kind(spec) == "number" and not _IN_PERCENT.search(f"{name} {description}"))
    ):
        value = round(value / 100, 10)
    value = converted(value, number.unit, description)
    if number.unit.lower() in ("am", "pm") and value == 12 and _DAY_HOURS.search(description):
        value = 0 if number.unit.lower() == "am" else 12  # midnight, noon
    elif number.unit.lower() == "pm" and 1 <= value < 12 and _DAY_HOURS.search(description):
        value += 12  # "until 11 PM" for an hour "in 24 hour format": 23
    if kind(spec) != "integer":
        return value
    return int(value) if float(value).is_integer() else None

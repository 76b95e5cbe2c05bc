"""Which value of a known set a task names: an enum's, or one a parameter's description
lists ("e.g. strategy, family", "Can be 'list' or 'dict'", "(walk, bike, transit)") — as
written, by what the description says it means ("'en' for English") or, for a language's
code ("fr", "es-ES"), by the language's name, by the stems of its
words ("defined" → "definition"), as an abbreviation ("DESC" for "descending") or, for
an action an option names, by a verb of the same action the task asks with ("remove the
item" for "delete"); and which number a task names by what its description says the
number stands for ("'2' represents ironing service")."""

from __future__ import annotations

import functools
import re
from typing import Any

from toolrun.selection.languages import NAMES_BY_CODE
from toolrun.selection.text import ACCIDENTAL, STOP_WORDS, split_words, stem
from toolrun.selection.unitsizes import unit_of

# Values a description lists: "e.g. strategy, family", "Can be 'list' or 'dict'",
# "(walk, bike, transit)"; "'en' for English" says what a value means.
_LISTING = re.compile(
    r"(?:\be\.g\.|\bsuch as|\bfor (?:example|instance)|\boptions(?: are| include)?"
    r"|\bchoices are|\bcan be|\bcould be|\bone of|\beither|\bincludes?|\bincluding|\blike)"
    r"[:,]?\s+(.+?)(?:\.(?=\s+[^\s\d]|\s*$)|;|$)",  # not the period of "Symphony No. 9"
    re.I,
)
# Not an apostrophe: "the user's name, e.g. 'john'" lists john.
_DESCRIBED_QUOTE = re.compile(r"(?<![A-Za-z0-9])'([^'\n]{1,40})'(?![A-Za-z])|\"([^\"\n]{1,40})\"")
# A quote that names a parameter is no value: "if it is not given in the 'url' parameter".
_PARAMETER_NAMED = re.compile(r"\s+(?:parameters?|arguments?|propert(?:y|ies))\b", re.I)
_PARENTHESISED = re.compile(r"\(([^()]*(?:,|\bor\b)[^()]*)\)")
_ITEM_BREAK = re.compile(r",|\bor\b|\band\b|\betc\b\.?")
# What introduces a list, no item of it: "(e.g., Asia, Europe, Africa)" lists Asia, Europe
# and Africa, not "e.g." nor "Africa)".
_MARKER = re.compile(r"^(?:e\.g\.|i\.e\.|eg\.|such as|for example|for instance)[,:]?\s*", re.I)
# Verbs of one action: a task that asks for one names an option that is another ("remove
# the item" → "delete", "create a todo" → "add"). Only where no option is named
# otherwise, and only a verb as asked: a sentence's first word, or after "please",
# "you", "then" or "need/want/like/have to" ("can you create…", "I need to remove…"),
# not a word in a statement ("the launch failed") nor what a to-do says ("remind me to
# finish…"). The option whose verb comes first is named.
_SAME_ACTION = tuple(
    frozenset(group.split())
    for group in (
        "add create insert append",
        "delete remove erase destroy",
        "update modify edit",
        "get fetch retrieve",
        "list enumerate",
        "start begin launch open",
        "stop halt terminate close quit exit",
        "enable activate",
        "disable deactivate",
        "complete finish",
    )
)
_ASKING = frozenset({"please", "you", "then"})
_WANTING = frozenset({"need", "want", "like", "have"})  # … "to" after one of them
_LONGEST_START = 24  # letters of a stem's beginning that may stand for it ("defin")
_SORT_ORDERS = {"asc": "ascend", "desc": "descend"}  # "descending", not "description"
_COUNT_ABBREVIATED = re.compile(r"(\d+)([A-Za-z]{1,3})")
_SENTENCES = re.compile(r"[.!?;:\n]+")
MEANING = re.compile(
    r"'([^']+)'\s*(?:for|=|means|refers to|stands for)\s+(?:an?\s+|the\s+)?"
    r"([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)*)"
)


# A number a description says stands for something: "'1' represents a cleaning service",
# "2 for Chiang Mai", "3 corresponds to Chonburi", "'2' to Chiang Mai" (after one of
# those), "4 = archived"; not a range's end ("from 1 to 5") nor the default ("Default is
# 6 for a standard die").
_MEANT = re.compile(
    r"(?<![\w.])(?<!from )(?<!between )(?<!default is )(?<!defaults to )'?(\d{1,9})'?\s*"
    r"(?:represents|means|stands for|corresponds to|refers to|for|to|=|:)\s+"
    r"(?:an?\s+|the\s+)?([A-Za-z][^,.;:()'\"\n]{0,60}?)\s*(?=,|\.(?:\s|$)|;|\)|\band\b|$)",
    re.I,
)
_FEWEST_MEANINGS = 2  # a description that gives one is giving an example
# A language's code: "fr", "fr-FR", "zh_CN" (`languages`).
_LANGUAGE_CODE = re.compile(r"([a-z]{2})(?:[-_][A-Z]{2})?")
_FEWEST_CODES = 2  # one code among other values is likely a word ("yes", "no")


@functools.lru_cache(maxsize=4096)
def meanings_of(description: str) -> tuple[tuple[int, str], ...]:
    """The numbers `description` says stand for something, with what each stands for
    ("1 for cleaning service, 2 for ironing" → (1, "cleaning service"), (2, "ironing")):
    none where it gives fewer than two, or two for one number."""
    found = tuple((int(m[1]), m[2].strip()) for m in _MEANT.finditer(description))
    if len(found) < _FEWEST_MEANINGS or len({number for number, _ in found}) < len(found):
        return ()
    return found


def named_number(meanings: tuple[tuple[int, str], ...], task: str) -> int | None:
    """The number whose meaning the task names: all of its distinctive words by their stems
    ("ironing services" for "an ironing service": a word all the meanings share is not
    needed), the one with most such words where several are named ("big cleaning" over
    "cleaning"); None where the task names none, or two alike."""
    words_of = [frozenset(_option_stems(meaning)) for _, meaning in meanings]
    shared = frozenset.intersection(*words_of) if words_of else frozenset()
    _, stems, starts = task_stems(task)
    named = [
        (len(distinct), number)
        for (number, _), words in zip(meanings, words_of, strict=True)
        if (distinct := words - shared) and all(_stem_said(w, stems, starts) for w in distinct)
    ]
    named.sort(reverse=True)
    if not named or (len(named) > 1 and named[0][0] == named[1][0]):
        return None
    return named[0][1]


def listed(description: str) -> tuple[str, ...]:
    """The values `description` lists: quoted, after "e.g."/"such as"/"can be", or in
    parentheses ("(walk, bike, transit)")."""
    found = [
        next(g for g in m.groups() if g)
        for m in _DESCRIBED_QUOTE.finditer(description)
        if not _PARAMETER_NAMED.match(description, m.end())
    ]
    for match in [*_LISTING.finditer(description), *_PARENTHESISED.finditer(description)]:
        found += _ITEM_BREAK.split(match[1])
    items = (_item(item) for item in found)
    return tuple(dict.fromkeys(i for i in items if i and len(i.split()) <= 4))


def _item(text: str) -> str:
    """A listed value without its list's marker, quotes, or a parenthesis of the list's
    ("(e.g., Asia, Europe, Africa)": Africa; "'cos(x)'" keeps its own)."""
    item = _MARKER.sub("", text.strip(" '\"`:")).strip(" '\"`:")
    if item.count("(") != item.count(")"):
        item = item.strip("()").strip(" '\"`:")
    return item


def named_option(
    options: Any,
    task: str,
    meanings: tuple[tuple[str, str], ...] = (),
    *,
    source: bool = False,
    language: bool = False,
) -> tuple[Any, str]:
    """The first of `options` the task names: as written (whole words), by what the
    description says it means (`meanings`: "'en' for English"), a language's code by
    the language's name (for a parameter that asks for a `language`, or where every
    option is such a code), or by its words' stems ("defined" → "definition"). Where it
    changes one written option to another ("from pizza to a burger"), the new one, or
    for a `source` parameter (from_…) the old."""
    named = [(option, str(option)) for option in options if _written(str(option), task)]
    written = _longest(named, task)
    if len(written) > 1 and (change := _change(written, task)):
        return change[0 if source else 1], "enum value in the task (of the change it asks for)"
    if written:
        return written[0][0], "enum value in the task"
    if zone := _zone_named(options, task):  # "London time" → Europe/London
        return zone, "enum value in the task (a time zone by its place)"
    meant = [
        (value, meaning)
        for value, meaning in (*meanings, *_languages(options, language))
        if value in options and _written(meaning, task)
    ]
    if len({value for value, _ in meant}) > 1 and (change := _change(meant, task)):
        return change[0 if source else 1], "enum value in the task (of the change it asks for)"
    if meant:
        return meant[0][0], "enum value in the task (by its meaning)"
    for option in options:
        if _by_stem(str(option), task):
            return option, "enum value in the task (by its stem)"
    acted = [(option, _action_place(str(option), task)) for option in options]
    places = sorted((place, str(o)) for o, place in acted if place is not None)
    if places and (len(places) == 1 or places[0][0] < places[1][0]):
        chosen = next(o for o in options if str(o) == places[0][1])
        return chosen, "enum value in the task (by a verb of its action)"
    return None, ""


def _longest(named: list[tuple[Any, str]], task: str) -> list[tuple[Any, str]]:
    """`named` without an option the task writes only within a longer one named too
    ("Comedy" within "Comedy-drama"; not "men" in "for men, not women")."""
    return [
        (option, words)
        for option, words in named
        if not all(
            any(_within(place, words, longer, task) for _, longer in named if longer != words)
            for place in _places(words, task)
        )
    ]


def _within(place: int, words: str, longer: str, task: str) -> bool:
    """Whether `words`, written at `place`, is part of `longer` written around it."""
    return any(
        start <= place and place + len(words) <= start + len(longer)
        for start in _places(longer, task)
    )


def _change(named: list[tuple[Any, str]], task: str) -> tuple[Any, Any] | None:
    """The two of the `named` options (each with the words that name it) that the task
    asks to change from one to the other ("switch from pizza to a BURGER", "from
    English to French"), as (from, to)."""
    for match in _FROM_TO.finditer(task):
        old = [o for o, words in named if _written(words, match[1])]
        new = [o for o, words in named if _written(words, match[2]) and o not in old]
        if old and new:
            return old[0], new[0]
    return None


def _languages(options: Any, asked: bool) -> tuple[tuple[str, str], ...]:
    """Each of `options` that is a language's code ("fr", "es-ES", "zh_CN") with each
    name a task may call the language by, where two or more are and a language is
    `asked` for or every option is one ("yes" and "no" are no languages, nor are state
    codes with a "hi" among them)."""
    coded = [
        (option, NAMES_BY_CODE[code[1]])
        for option in options
        if isinstance(option, str)
        and (code := _LANGUAGE_CODE.fullmatch(option))
        and code[1] in NAMES_BY_CODE
    ]
    if len(coded) < _FEWEST_CODES or not (asked or len(coded) == len(options)):
        return ()
    return tuple((option, name) for option, names in coded for name in names)


_FROM_TO = re.compile(r"\bfrom\s+((?:\S+\s+){0,3}?\S+)\s+(?:to|into)\s+((?:\S+\s+){0,3}\S+)", re.I)


def named_options(options: list[Any], task: str) -> list[Any]:
    """Every one of `options` the task names (as written or by stem), in the task's order."""
    found = [o for o in options if _written(str(o), task) or _by_stem(str(o), task)]
    lowered = task.lower()
    return sorted(found, key=lambda o: (lowered.find(str(o).lower()) + 1) or len(task) + 1)


_ZONE = re.compile(r"(?:[A-Z][a-z]+/)+([A-Z][A-Za-z]*(?:[_-][A-Za-z]+)*)")


def _zone_named(options: Any, task: str) -> Any:
    """The Olson time zone among `options` whose place the task names ("New York" for
    America/New_York, "Port of Spain" for America/Port_of_Spain): the one followed by
    "time" where several are named ("in Paris, London time"), else the first."""
    named = [
        (option, place)
        for option in options
        if (found := _ZONE.fullmatch(str(option)))
        and _written(place := found[1].replace("_", " "), task)
    ]
    timed = [option for option, place in named if _written(f"{place} time", task)]
    return (timed or [option for option, _ in named] or [None])[0]


def _written(option: str, task: str) -> bool:
    """`option` in `task` as whole words (case aside, but for a short one: "A" is no "a";
    "C" is not written in "C#" or "C sharp major")."""
    return bool(_places(option, task))


@functools.lru_cache(maxsize=8192)
def _places(option: str, task: str) -> tuple[int, ...]:
    """Where `option` is written in `task` as whole words (as `_written` reads it)."""
    text, wanted = (task, option) if len(option) <= 2 else (_lowered(task), option.lower())
    found = []
    place = text.find(wanted) if option else -1
    while place >= 0:
        end = place + len(wanted)
        noted = ACCIDENTAL.match(text, end) if len(wanted) == 1 else None
        if not (_wordy(text, place - 1) or _wordy(text, end) or noted):
            found.append(place)
        place = text.find(wanted, place + 1)
    return tuple(found)


def _wordy(text: str, place: int) -> bool:
    """A word character at `place` of `text` (none outside it)."""
    return 0 <= place < len(text) and (text[place].isalnum() or text[place] == "_")


@functools.lru_cache(maxsize=256)
def _lowered(task: str) -> str:
    return task.lower()


def _by_stem(option: str, task: str) -> bool:
    """Each of the option's words by its stem in the task (not stop words alone); "DESC"
    as the start of a task's word ("DEPT" of "department"), a sort order ("asc", "desc",
    in either case) only as "ascending" or "descending"; a number with a unit's short
    form as that number of that unit ("24h" as "24 hour"; not "3m" as "3 months")."""
    if counted := _COUNT_ABBREVIATED.fullmatch(option):
        number, short = counted.groups()
        unit = unit_of(short)
        return unit is not None and any(
            unit_of(written) == unit
            for written in re.findall(rf"(?<![\d.]){number}[ -]?([A-Za-z]+)", task)
        )
    _, stems, starts = task_stems(task)
    if order := _SORT_ORDERS.get(option.lower()):
        return any(s.startswith(order) for s in stems)
    if option.isupper() and option.isalpha() and len(option) >= 3:
        start = option.lower()
        return any(s.startswith(start) and len(s) > len(start) for s in stems)
    wanted = _option_stems(option)
    return bool(wanted) and all(_stem_said(w, stems, starts) for w in wanted)


def _action_place(option: str, task: str) -> int | None:
    """Where the task first asks, with another verb of it, for the action a one-word
    option names ("remove the item" for "delete"); None where it does not."""
    wanted = option.lower()
    verbs = set().union(*(group for group in _SAME_ACTION if wanted in group))
    return min((p for word, p in _asked_verbs(task).items() if word in verbs), default=None)


@functools.lru_cache(maxsize=256)
def _asked_verbs(task: str) -> dict[str, int]:
    """The words of `task` in a verb's place when asking, with where each first comes:
    each sentence's first word, and those after "please", "you", "then", or "to" after
    "need", "want", "like", "have"."""
    found: dict[str, int] = {}
    place = 0
    for sentence in _SENTENCES.split(task):
        said = split_words(sentence)
        for at, word in enumerate(said):
            before = said[at - 1] if at else ""
            wanted = before == "to" and at > 1 and said[at - 2] in _WANTING
            if at == 0 or before in _ASKING or wanted:
                found.setdefault(word, place + at)
        place += len(said)
    return found


@functools.lru_cache(maxsize=4096)
def _option_stems(option: str) -> tuple[str, ...]:
    """The stems of an option's words; none for one of stop words only ("it-IT")."""
    words = split_words(option)
    if len(option) <= 2 or all(w in STOP_WORDS for w in words):
        return ()
    return tuple(stem(w) for w in words)


@functools.lru_cache(maxsize=256)
def task_stems(task: str) -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    """The stems of the task's words in order ("don't" as "do not"), as a set, and their
    beginnings of 5 letters or more (at most _LONGEST_START: linear on one long word)."""
    said = tuple(stem(w) for w in split_words(task.replace("n't", " not")))
    stems = frozenset(said)
    ends = ((s, min(len(s), _LONGEST_START + 1)) for s in stems)
    return said, stems, frozenset(s[:k] for s, end in ends for k in range(5, end))


def _stem_said(wanted: str, stems: frozenset[str], starts: frozenset[str]) -> bool:
    """A stem in the task, or alike one: one of them (of 5 letters or more) begins the
    other ("defin" of "definit")."""
    if wanted in stems or (len(wanted) >= 5 and wanted in starts):
        return True
    return any(wanted[:k] in stems for k in range(5, min(len(wanted), _LONGEST_START + 1)))

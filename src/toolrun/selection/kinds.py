"""Step 5's values of a kind a parameter's name asks for, each read where the task marks
it as one: a time of day ("departure_time"), the asker's own name ("user_name"), a
command ("command"), a division written with its word ("district_name": "Chatuchak
District"), a season by its years ("season"), the end of a range of times (an "end"
date), a number by what it stands for (a description's "2 for ironing service"), a
colour ("color"), a month ("month"), the language to use ("in Japanese") and that of
the text the task quotes; and what every step-5 rule uses: a name's words, forgetting
a value once given, and the task without the values taken (for an option's words)."""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.dates import MONTHS, Day, time_written
from toolrun.selection.facts import Facts
from toolrun.selection.languages import NAMES as LANGUAGES
from toolrun.selection.languages import NAMES_BY_CODE as LANGUAGE_NAMES_BY_CODE
from toolrun.selection.languages import NAMES_PATTERN as LANGUAGES_PATTERN
from toolrun.selection.numbering import kind, name_words
from toolrun.selection.options import meanings_of, named_number
from toolrun.selection.quotes import quoted_strings
from toolrun.selection.text import blanked, split_words, stem

# Whoever asks, in a parameter's name: "user_name", "person_name", "customer_name".
_ASKER = frozenset(
    {"user", "person", "customer", "client", "passenger", "guest", "patient", "caller", "my"}
)
# Words of a parameter named for something about a command, not for its text.
_ABOUT_A_COMMAND = frozenset(
    {"id", "ids", "count", "number", "num", "index", "type", "timeout", "status", "code"}
    | {"history", "output", "result", "results", "time", "key"}
)
# Divisions of a country whose word a task writes after the name ("Chatuchak District")
# and a parameter for one takes without it.
_DIVISIONS = frozenset({"district", "subdistrict", "province", "prefecture", "county"})
# Colours a task may name, and the words of a parameter named for one.
_COLOURS = frozenset(
    {"red", "orange", "yellow", "green", "blue", "purple", "violet", "pink", "brown"}
    | {"black", "white", "gray", "grey", "silver", "gold", "cyan", "magenta", "teal"}
    | {"navy", "maroon", "beige", "turquoise", "indigo", "crimson", "scarlet", "lavender"}
)
_COLOUR_WORDS = frozenset({"color", "colour"})
_MONTH = re.compile(
    r"\b(?:{})\b(?!\s+(?:I|we|you|he|she|they|it)\b)".format(
        "|".join(month.capitalize() for month in MONTHS)
    )
)
_WORD = re.compile(r"[A-Za-z]+")
_NEGATED = re.compile(r"\b(?:not|no|without)\s+$", re.I)
# A description of a parameter for the language the task's own text is in ("The language
# in which the text is written", "the language the text is currently in").
_OWN_LANGUAGE = re.compile(
    r"(?<!programming )\blanguage (?:(?:in which|that) the (?:{0}) (?:is|was) (?:written|asked)"
    r"|the (?:{0}) is (?:currently |written )?in\b)".format(
        "text|question|message|review|sentence|content|document|query|comment|tweet|post"
    ),
    re.I,
)
_CODES = re.compile(r"\bISO[ -]?639|\blanguage codes?\b|\bcodes? such as\b", re.I)
# A language the task names as one: "in Japanese", "into French", "Spanish subtitles"
# (not "a Japanese restaurant", "in French Guiana", "in Chinese yuan", "in English units").
_NOT_LANGUAGE_AFTER = "units?|yuan|won|rupiah|rupees?|currency|mythology|food|cuisine"
_AS_LANGUAGE = re.compile(
    rf"\b(?:in|into)\s+({LANGUAGES_PATTERN})\b(?!(?-i:\s+[A-Z])|\s+(?:{_NOT_LANGUAGE_AFTER})\b)"
    rf"|\b({LANGUAGES_PATTERN})\s+(?:language|translation|subtitles|version)\b",
    re.I,
)
_LANGUAGE_NAME_WORDS = frozenset({"language", "lang", "locale"})
# Words of a language parameter's name for a side of a translation or a programming
# language (source_language, to_lang; "the language to use" in a description is none).
_NOT_THE_LANGUAGE = frozenset(
    {"source", "target", "from", "to", "input", "output", "original", "destination"}
    | {"native", "programming"}
)
_PROGRAMMING = re.compile(r"\bprogramming\b", re.I)  # … and of its description
# A few of the commonest English words: text with two of them is English.
_ENGLISH = frozenset({"the", "is", "and", "it", "i", "you", "a", "to", "of", "this", "not"})
# A date parameter for the end of a range ("end_date", "until_date").
_ENDS = frozenset({"end", "until", "to", "finish", "stop"})

Found = dict[str, tuple[Any, str]]  # a value and its source, by parameter name
COMMAND_GIVEN = "command given in the task"  # a source: a command, for a command parameter
# The values `outside_names` blanks: a name's few words (not a whole task another
# parameter took), and a few of them (a task's values are a few).
_NAME_WORDS = 5
_MOST_NAMES = 16


@functools.lru_cache(maxsize=4096)
def own_words(name: str) -> frozenset[str]:
    """A parameter name's words, as written (lowercase)."""
    return frozenset(split_words(name))


def forget(facts: Facts, value: Any) -> None:
    """`value` (or each of a list's) is used: it is given to no other parameter; nor is
    a name it writes with its region ("Seattle" of "Seattle, WA")."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            lowered = item.lower()
            facts.used.append(lowered)
            head = lowered.split(",", 1)[0].strip()
            pools = (facts.quoted, facts.names, facts.codes, facts.identifiers, facts.paths)
            for pool in (*pools, facts.urls, facts.emails):
                if any(found.lower() == lowered for found in pool):
                    pool[:] = [found for found in pool if found.lower() != lowered]
            if head != lowered and head in (name.lower() for name in facts.names):
                facts.names[:] = [name for name in facts.names if name.lower() != head]


def outside_names(task: str, facts: Facts, options: list[Any]) -> str:
    """`task` with the values of two to five words another parameter took before (as
    whole words, in any case) blanked, but for one that is one of `options`: a word of
    such a value names no option (the museum "Natural History Museum" is no "history";
    "a Comfort Uber ride" may be "comfort"); a whole task taken is not blanked."""
    wanted = {str(option).lower() for option in options}
    named = sorted(
        {value for value in facts.used if 2 <= len(value.split()) <= _NAME_WORDS} - wanted,
        key=lambda value: (-len(value), value),  # the longest first, where one holds another
    )[:_MOST_NAMES]
    if not named:
        return task
    pattern = re.compile(
        r"(?<!\w)(?:{})(?!\w)".format("|".join(re.escape(value) for value in named)), re.I
    )
    return blanked(task, [match.span() for match in pattern.finditer(task)])


def meant_numbers(card: ToolCard, task: str) -> dict[str, int]:
    """The number of each whole-number parameter whose description says what its numbers
    stand for, where the task names one ("ironing services" for "2 for ironing service")."""
    found = {}
    for name, spec in card.properties.items():
        meanings = meanings_of(str(spec.get("description", ""))) if kind(spec) == "integer" else ()
        if meanings and (number := named_number(meanings, task)) is not None:
            found[name] = number
    return found


def times_of_day(names: list[str], card: ToolCard, facts: Facts) -> Found:
    """For each text parameter of a time of day alone ("departure_time": "in 24-hour
    format, such as '18:45'"), in turn: the time of the task's first date that has one
    (which stays for a date parameter too), then the times it writes on their own ("on
    May 5 at 14:00, back at 18:30"); written as the description asks
    (`dates.time_written`)."""
    found: Found = {}
    dated = [day.time for day in facts.dates if day.time is not None][:1]
    for name in names:
        if "time" not in own_words(name):
            continue
        pool = dated or facts.times
        description = str(card.properties[name].get("description", ""))
        if pool and (written := time_written(pool[0], description)) is not None:
            found[name] = (written, "time of day in the task")
            pool.pop(0)
    return found


def asker_name(names: list[str], facts: Facts) -> Found:
    """The name the user gives as theirs ("My name is Emily") to the first text parameter
    for the name of whoever asks ("user_name", "person_name", "customer_name"), not to
    another name parameter ("partner_name" takes the other)."""
    own = facts.own_name
    if own is None:
        return {}
    for name in names:
        words = own_words(name)
        if "name" in words and words & _ASKER:
            forget(facts, own)
            return {name: (own, "the user's own name in the task")}
    return {}


def commands(names: list[str], facts: Facts) -> Found:
    """Each command the task gives after the word "command", in turn, to a text
    parameter named for one ("command", "cmd"), not for something about one
    ("command_id", "command_timeout")."""
    found: Found = {}
    for name in names:
        if facts.commands and _for_a_command(name):
            found[name] = (facts.commands.pop(0), COMMAND_GIVEN)
    return found


def takes_command(card: ToolCard) -> bool:
    """Whether `card` has a text parameter for a command to run (`commands`)."""
    return any(
        _for_a_command(name) and kind(spec) == "string" and "enum" not in spec
        for name, spec in card.properties.items()
    )


def _for_a_command(name: str) -> bool:
    words = own_words(name)
    return bool(words & {"command", "cmd"}) and not words & _ABOUT_A_COMMAND


def divisions(names: list[str], facts: Facts) -> Found:
    """The name the task writes with the word of the division a text parameter is for,
    without that word: "Chatuchak District" gives district_name Chatuchak, "Ton Pao
    Subdistrict" sub_district_name Ton Pao, "Santa Clara county" county Santa Clara;
    only where one of the task's names is of that division. Only a division's word
    (`_DIVISIONS`): others are part of a name ("Premier League", "Yellowstone National
    Park", "Foster City", "Penn State")."""
    found: Found = {}
    for name in names:
        division = "".join(w for w in split_words(name) if w not in {"name", "id"})
        if division not in _DIVISIONS:
            continue
        named = [n.rsplit(" ", 1) for n in facts.names if " " in n]
        of_division = [" ".join(w) for w in named if w[1].lower() == division]
        # … or followed by it in lower case ("Santa Clara county")
        followed = [n for n in facts.names if facts.after.get(n, [])[:1] == [stem(division)]]
        if len(of_division) == 1:
            written, value = of_division[0], of_division[0].rsplit(" ", 1)[0]
        elif len(followed) == 1:
            written = value = followed[0]
        else:
            continue
        facts.names.remove(written)
        found[name] = (value, "named with its division in the task")
        forget(facts, value)
    return found


def seasons(names: list[str], facts: Facts) -> Found:
    """The season the task names by its years ("the 2019-2020 season") to a text
    parameter named for one; its years are then no numbers of the task's."""
    found: Found = {}
    for name in names:
        if facts.seasons and "season" in own_words(name):
            season = facts.seasons.pop(0)
            found[name] = (season, "season in the task")
            for year in re.findall(r"\d+", season):
                same = next((n for n in facts.numbers if n.value == int(year)), None)
                if same is not None:
                    facts.numbers.remove(same)
    return found


def range_end(own: frozenset[str], facts: Facts) -> Day | None:
    """For a date parameter for an end ("end_date"), where no date is left: the day a
    date parameter took last, at the end of the range of times written after its time
    ("on 12/03/2024 16:00 - 18:00"); None where it has none. That time is then given to
    no time parameter."""
    taken = facts.given_dates[-1:]
    if not (own & _ENDS and taken and taken[0].until is not None):
        return None
    until = taken[0].until
    if until in facts.times:
        facts.times.remove(until)
    return replace(taken[0], time=until, until=None)


def colours(names: list[str], facts: Facts) -> Found:
    """The colours the task names ("in red", "a small green bird", a name that ends in
    one: "Sea Green"; not the one inside "Green Bay Packers"), in its order, to the text
    parameters of `names` named for a colour (color, color1, dominant_color)."""
    wanted = [name for name in names if own_words(name) & _COLOUR_WORDS]
    if not wanted:
        return {}
    text = _unquoted(facts.whole)  # not the "Green" of a title 'Green Energy'
    named = [(text.find(n), n) for n in facts.names if n in text]
    spans = [(start, start + len(n)) for start, n in named]
    said = [(start, n) for start, n in named if n.split()[-1].lower() in _COLOURS]
    said += [
        (match.start(), match[0])
        for match in _WORD.finditer(text)
        if match[0].lower() in _COLOURS
        and not any(start <= match.start() < end for start, end in spans)
        and not _NEGATED.search(text, max(match.start() - 8, 0), match.start())
    ]
    found: Found = {}
    for start, colour in sorted(said):
        following = _WORD.search(text, start + len(colour))  # "navy background"
        near = (following[0].lower(), stem(following[0])) if following else ()
        open_ = [name for name in wanted if name not in found]
        if not open_:
            break
        named_for = [name for name in open_ if set(near) & (own_words(name) | name_words(name))]
        found[(named_for or open_)[0]] = (colour, "colour in the task")
    return found


def text_language(names: list[str], card: ToolCard, facts: Facts) -> Found:
    """English (or "en" where codes are asked for) for a parameter of `names` described
    as the language the task's text is written in, where the task quotes that text and
    it is English ("the sentiment of the review 'I love the food here!'"); a task that
    names a language leaves it to that."""
    wanted = [n for n in names if _OWN_LANGUAGE.search(str(card.properties[n].get("description")))]
    texts = [*facts.quoted, *facts.verbatim]
    if not wanted or not texts:
        return {}
    words = [word.lower() for word in _WORD.findall(" ".join(texts))]
    if len(_ENGLISH.intersection(words)) < 2 or re.search(r"[^\x00-\x7f]", "".join(texts)):
        return {}
    if LANGUAGES.intersection(word.capitalize() for word in _WORD.findall(facts.whole)):
        return {}  # "the Spanish review '…'": the task says which
    found: Found = {}
    for name in wanted:
        description = str(card.properties[name].get("description"))
        found[name] = ("en" if _CODES.search(description) else "English", "the text's language")
    return found


def named_language(names: list[str], card: ToolCard, facts: Facts) -> Found:
    """The first language the task names as one ("in Japanese", "into French", "Spanish
    subtitles") to the first text parameter of `names` for the language to use (not a
    side of a translation, a programming language, nor the language the task's text is
    in: `text_language`), as its name or, where the description asks for codes, its ISO
    639-1 code."""
    wanted = [name for name in names if _the_language(name, card)]
    found = _AS_LANGUAGE.search(_unquoted(facts.whole)) if wanted else None
    if found is None:
        return {}
    language = (found[1] or found[2]).capitalize()
    description = str(card.properties[wanted[0]].get("description", ""))
    if _CODES.search(description):
        code = next(c for c, called in LANGUAGE_NAMES_BY_CODE.items() if language in called)
        return {wanted[0]: (code, "language in the task")}
    return {wanted[0]: (language, "language in the task")}


def _the_language(name: str, card: ToolCard) -> bool:
    """Whether `name` is for the language to use: its name says so and is of no side of
    a translation (source_language, to_lang), and its description is of no programming
    language, nor of the language the task's own text is in."""
    description = str(card.properties[name].get("description", ""))
    return bool(
        own_words(name) & _LANGUAGE_NAME_WORDS
        and not own_words(name) & _NOT_THE_LANGUAGE
        and not _PROGRAMMING.search(description)
        and not _OWN_LANGUAGE.search(description)
    )


def month_names(names: list[str], facts: Facts) -> Found:
    """The first month the task names ("in December"; not inside quotes, "Play 'November
    Rain'", nor as a longer name's start, "May Day", nor "May I…") to a text parameter
    of `names` named "month"."""
    wanted = [name for name in names if own_words(name) == {"month"}]
    if not wanted:
        return {}
    text = _unquoted(facts.whole)
    longer = [n for n in facts.names if " " in n]
    for found in _MONTH.finditer(text):
        if not any(n.startswith(found[0] + " ") and n in text for n in longer):
            return {wanted[0]: (found[0], "month in the task")}
    return {}


@functools.lru_cache(maxsize=256)
def _unquoted(text: str) -> str:
    """`text` with what it quotes blanked."""
    for quoted in quoted_strings(text):
        text = text.replace(quoted, " " * len(quoted))
    return text

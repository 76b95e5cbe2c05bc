"""Values whose parameter the words just before them name, for step 5 (`arguments`):
"the subject 'Weekly report'", "case number CA123", "title Notes"; and names whose
parameter the words just after them name ("David Leitch as the director", "Alex King
in the cast"), that "by" makes a maker of ("Roar by Katy Perry" for an artist) or that
the words around them say play in something ("with Duane Whitaker", "starring Tom
Hanks", "acted by Lori Tuisano" for the cast)."""

from __future__ import annotations

import functools
import re
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import Facts
from toolrun.selection.kinds import forget, own_words
from toolrun.selection.languages import NAMES as LANGUAGES
from toolrun.selection.numbering import LINKING, name_words
from toolrun.selection.placing import PLACES, written_place
from toolrun.selection.text import STOP_WORDS, split_words, stem

# Parameter name words too common to say on their own which value a task means.
GENERIC = frozenset(
    {"name", "id", "identifi", "uuid", "type", "valu", "data", "number", "text", "string"}
    | {"code"}
)
_NEAR = 3  # words before a string value that may name its parameter
# What a name after "by" is ("Roar by Katy Perry", "a novel by Toni Morrison"): a
# parameter named for one takes it.
_MAKERS = frozenset(
    stem(word)
    for word in [
        *("artist", "author", "singer", "composer", "band", "writer", "creator", "director"),
        *("painter", "sculptor", "musician", "performer", "publisher", "maker", "designer"),
    ]
)
# Who plays in something ("with Duane Whitaker", "starring Tom Hanks", "acted by Lori
# Tuisano", "Michaela Watkins starring in it"): a parameter named for one takes the name.
_PERFORMERS = frozenset(stem(w) for w in ("cast", "actor", "actress", "star", "performer"))
_PLAYS_BEFORE = (["star"], ["featur"])  # stems of the word just before a name
_PLAYS_BY = (["act", "by"], ["play", "by"], ["perform", "by"])
_PLAYS_AFTER = (["star"], ["in", "it"])  # … and of the words just after it
# "with" a name plays only where no word after it says what the name is of ("with Duane
# Whitaker and…", not "with IMDb rating above 8", "with Netflix subtitles").
_WITH = ["with"]
# Words between a name and the word after it that says its role: "Alex King in the
# cast", "David Leitch as the director", "Ann is the author" (not "the Eminem concert",
# "SSID with a message", "Hilton is available").
_ROLE = re.compile(r"(?:(?:as|in|on)(?: (?:the|a|an))?|is (?:the|a|an)) ([a-z]\w*)")
_RELATING = frozenset({"for", "of", "in", "on", "at", "with", "from", "about"})
# "at" before a name or a number says where or when, not what it is: "a facial
# treatment at Tranquil Wellness Center", "the antigen at 1 month" (a quote or a code it
# may name: "the repository at 'acme-web'").
_WHERE_LINKING = LINKING - {"at"}
_EXAMPLES = re.compile(
    r"\(?(?:\be\.g\.|\bi\.e\.|\bsuch as\b|\bfor (?:example|instance)\b|\bexamples?\b)", re.I
)


def named_strings(names: list[str], card: ToolCard, facts: Facts) -> dict[str, tuple[Any, str]]:
    """Strings, codes, names and numbers (as text) whose parameter the words just before
    them name ("the subject 'Weekly report'", "case number CA123"), each to the parameter
    whose name they cover best."""
    candidates: list[tuple[str, list[str], list[Any]]] = [
        (value, facts.before.get(value, []), pool)
        for pool in (facts.quoted, facts.codes, facts.names, facts.identifiers, facts.paths)
        for value in pool
    ]
    candidates += [  # a time of day as written ("15:39"), not its hour alone
        (n.clock or _as_text(n.value), n.before, facts.numbers)
        for n in facts.numbers
        if not (n.spelt or n.percent or n.in_clock)
    ]
    heads = [head_of(name) for name in names]
    alone = [heads.count(head) == 1 for head in heads]  # a head no other parameter has
    placed = [bool(name_words(name) & PLACES) for name in names]  # "Washington State": WA
    telling = _telling(card)
    scored = []
    for place, (value, before, pool) in enumerate(candidates):
        near = before[-_NEAR:]
        after = " ".join(facts.after.get(value, [])) if pool is facts.names else ""
        said_after = role[1] if (role := _ROLE.match(after)) else ""
        # The word right after a quote, identifier or code ("the 'SHAP' method"; a name's
        # is no role: "the Tim Burton movie").
        following = next(iter(facts.after.get(value, [])), "")
        next_word = "" if pool is facts.names else following
        written_next = facts.word_after.get(value, "") if next_word else ""
        # … which, where it is another parameter's own head and a preposition stands
        # between the words before and the value, says those do not name it ("the
        # metrics for the LinkedIn dataset": not the metric; "the subject 'Q3' body…" is).
        other = following if following in heads and alone[heads.index(following)] else ""
        # A name that says what it is: "Hotel Paradise" for hotel_name (not "DNA" alone).
        own = {stem(w) for w in value.lower().split()} if pool is facts.names else set()
        own = own if len(own) > 1 else set()
        made_by = pool is facts.names and before[-1:] == ["by"]
        plays = pool is facts.names and _plays(
            value, before, facts.after.get(value, []), facts.whole
        )
        for order, name in enumerate(names):
            head = heads[order]
            named = head in near and not (other not in ("", head) and _related(near, head))
            where = pool is facts.names or pool is facts.numbers
            if named and (said := _said(name, near, where)):
                scored.append((-said, place, order))
            elif (
                said_after in telling.get(name, ())
                or (made_by and head in _MAKERS)
                or (plays and head in _PERFORMERS)
            ):
                scored.append((-1.0, place, order))
            elif alone[order] and (
                (next_word == head and _says(written_next, name))
                or (head in own and not placed[order])
            ):
                scored.append((-0.5, place, order))  # after what the words before name
    found: dict[str, tuple[Any, str]] = {}
    used: set[int] = set()
    for _, place, order in sorted(scored):
        name = names[order]
        if name in found or place in used:
            continue
        value, _, pool = candidates[place]
        _remove(pool, value)
        if pool is facts.names:
            value = written_place(
                value, facts, str(card.properties[name].get("description", "")), name
            )
        found[name] = (value, "named in the task")
        used.add(place)
        forget(facts, value)
    return found


def _related(near: list[str], head: str) -> bool:
    """Whether a preposition stands between `head`, among the words `near` a value, and
    the value: "the metrics for the …" relates the value to the metrics, it is no
    metric."""
    return bool(set(_after(near, head)) & _RELATING)


def _after(near: list[str], head: str) -> list[str]:
    """The words of `near` after the last `head` among them."""
    return near[len(near) - near[::-1].index(head) :]


def _says(word: str, name: str) -> bool:
    """Whether `word`, as written, is a word of parameter `name` or its plural: "method"
    or "methods" for method; not "composed" for composer, though both stem alike."""
    own = own_words(name)
    return word in own or (word.endswith("s") and word[:-1] in own)


def _plays(name: str, before: list[str], after: list[str], text: str) -> bool:
    """Whether the words around a name in `text` (`before` and `after` it, as stems) say
    it plays in something; a language's name plays in nothing ("with English
    subtitles")."""
    if name in LANGUAGES:
        return False
    return (
        before[-1:] in _PLAYS_BEFORE
        or before[-2:] in _PLAYS_BY
        or any(after[: len(words)] == words for words in _PLAYS_AFTER)
        or (before[-1:] == _WITH and _ends_a_phrase(name, text))
    )


def _ends_a_phrase(name: str, text: str) -> bool:
    """Whether `name` ends its phrase in `text`: a stop, the text's end or a stop word
    comes next ("with Duane Whitaker, directed by…", "with Tom Hanks and…"; not "with
    IMDb rating above 8")."""
    found = re.search(rf"(?<!\w){re.escape(name)}(?!\w)[ \t]*(?:([,.;:!?)]|$)|(\w+))", text)
    return found is not None and (found[2] is None or found[2].lower() in STOP_WORDS)


def _said(name: str, before: list[str], where: bool) -> float:
    """How much of parameter `name` the words just before a value say (0: not enough):
    its head word (the last one that is not generic: "date" of movie_date) must be among
    them, with only linking words after it ("the subject is 'Hi'"; not "at" for a value
    it says where or when of, `where`); a name of stop words only ("to") says
    nothing."""
    words, head = name_words(name), head_of(name)
    near = before[-_NEAR:]
    if not head or head not in near:
        return 0.0
    between = _after(near, head)
    linking = _WHERE_LINKING if where else LINKING
    if not set(between) <= linking | words | GENERIC:
        return 0.0
    return len(words & set(near)) / len(words)


def _telling(card: ToolCard) -> dict[str, frozenset[str]]:
    """Each parameter's words no other parameter has, of its name and its description's
    first sentence: what a word after a name must be to say it is this one's ("director"
    for directed_by, "actor" or "cast" for cast; not "movie", which all of them say)."""
    own = {
        name: (name_words(name) | _first_sentence(str(spec.get("description", "")))) - GENERIC
        for name, spec in card.properties.items()
    }
    return {
        name: words.difference(*(other for key, other in own.items() if key != name))
        for name, words in own.items()
    }


@functools.lru_cache(maxsize=4096)
def _first_sentence(description: str) -> frozenset[str]:
    """The stems of a description's first sentence up to the examples it gives, which
    are values, not what the parameter is ("The specific area (e.g., Pacific Ocean,
    North Sea)": area, not north)."""
    first = _EXAMPLES.split(description.split(". ", 1)[0], maxsplit=1)[0]
    return frozenset(stem(w) for w in split_words(first) if w not in STOP_WORDS)


@functools.lru_cache(maxsize=4096)
def head_of(name: str) -> str:
    """The word of a parameter's name that says what it is: the last that is not generic
    ("date" of movie_date, "bot" of botId); none for a name of stop words ("to")."""
    words = name_words(name)
    if words <= STOP_WORDS:
        return ""
    telling = [stem(w) for w in split_words(name) if not w.isdigit()]
    telling = [w for w in telling if w not in GENERIC]
    return telling[-1] if telling else next(iter(sorted(words)))


def _remove(pool: list[Any], value: str) -> None:
    """`value` taken from `pool`: a string, a number written so, or a time of day (its
    hour and, just after it, its minutes and seconds: one per colon it is written with)."""
    for at, item in enumerate(pool):
        if isinstance(item, str):
            if item == value:
                del pool[at]
                return
        elif item.clock:
            if item.clock == value:
                parts = item.clock.count(":")
                end = at + 1
                while end < len(pool) and end - at <= parts and pool[end].in_clock:
                    end += 1
                del pool[at:end]
                return
        elif not item.in_clock and _as_text(item.value) == value:
            del pool[at]
            return


def _as_text(value: float | int) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)

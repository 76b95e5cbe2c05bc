"""Step 5's last resort, with the embedding model: a required text parameter that the
rules left open takes the task's phrase most like it in meaning ("a sculpture made of
marble" gives marble for "material: The material used for the sculpture"), where one is
like it enough.

A phrase is a run of one to three words of the task with no stop word, preposition,
digit or past participle in it ("based", "located"), none of the tool's own words (a
value is what the tool is told, not what it is: "sculpture" is no material for a tool
that prices sculptures) and no word of a value already given. Of a phrase and a longer
one holding it that is about as like the parameter, the longer is taken ("plasma
membrane", not "membrane"). Each phrase is given once. Ranking and the judge never see
these guesses: they weigh what the rules found."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from toolrun.selection.arguments import Filled
from toolrun.selection.cards import ToolCard
from toolrun.selection.numbering import kind, name_words
from toolrun.selection.placing import PLACES
from toolrun.selection.text import STOP_WORDS, split_words, stem
from toolrun.tools.validation import argument_errors

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

SOURCE = "the task's phrase most like it in meaning (a guess)"
# Below this cosine no phrase of the task is taken for the parameter.
LEAST_LIKE = 0.25
# A longer phrase holding the best one is taken if it is at most this much less like.
LONGER_BY = 0.03
_LONGEST = 3
_MOST_PHRASES = 32  # of a long task, its first ones: each is embedded (1 to 3 ms each)
_SHORT_WORD = 4  # letters: "bed", "red", "Ted" are no past participles
_PREFIX = 5  # words sharing their first five letters are one word ("discovered", "discovery")
_WORD = re.compile(r"(?<![\w.@/])[^\W\d_](?:[^\W\d]|['&-])*(?<!['-])(?![\w@/]|\.\w)")
# Parameters for values of a form (places, dates, addresses, codes, commands),
# which the rules find by their form or not at all: a phrase like them is no such value.
_FORMED = PLACES | frozenset(
    stem(word)
    for word in [
        *("date", "day", "time", "year", "month", "week", "hour", "url", "link", "website"),
        *("email", "mail", "path", "file", "directory", "folder", "id", "identifier"),
        *("uuid", "code", "key", "token", "command", "number", "phone", "password", "query"),
    ]
)
_NOT_IN_A_VALUE = STOP_WORDS | frozenset(
    {"about", "over", "under", "near", "including", "include", "after", "before", "through"}
    | {"during", "between", "within", "without", "per", "via", "than", "across", "along"}
    | {"among", "around", "behind", "below", "above", "beyond", "toward", "towards", "upon"}
    | {"onto", "up", "down", "out", "off", "not", "no", "now", "here", "much", "many", "more"}
    | {"most", "very", "so", "but", "have", "has", "had", "been", "being", "am", "were"}
    | {"be", "it's", "what's", "there's", "currently", "current", "help", "know", "see"}
)


def guessed(encoder: Encoder, card: ToolCard, task: str, filled: Filled) -> Filled:
    """`filled` with each open required text parameter given the task's phrase most like
    it in meaning, where one is like it enough, and named among its guesses (so not
    valid until checked); `filled` itself is left as it was."""
    open_ = [
        name
        for name in filled.missing
        if name in card.required and _takes_a_phrase(name, card.properties[name])
    ]  # not one a schema rule requires: a terminal's session is no phrase
    if not open_:
        return filled
    phrases = _phrases(task, _own_words(card) | _given_words(filled.arguments))
    if not phrases:
        return filled
    asked = [_asking(name, card.properties[name]) for name in open_]
    vectors = encoder.encode([*asked, *phrases])  # unit vectors: products are cosines
    likeness = (vectors[: len(asked)] @ vectors[len(asked) :].T).tolist()  # a row per parameter
    arguments, sources = dict(filled.arguments), dict(filled.sources)
    taken: set[str] = set()
    for row, name in enumerate(open_):
        phrase = _most_like(phrases, likeness[row], taken)
        if phrase is not None:
            arguments[name], sources[name] = phrase, SOURCE
            taken.add(phrase)
    problems = argument_errors(card.validator, arguments)
    return Filled(
        arguments,
        sources=sources,
        missing=[name for name in filled.missing if name not in arguments],
        errors=[problems] if problems else [],
        guessed=[*filled.guessed, *(name for name in open_ if name in arguments)],
    )


def _takes_a_phrase(name: str, spec: dict[str, Any]) -> bool:
    """A text parameter with no listed values, no default its description names, and
    not for a value of a form."""
    description = str(spec.get("description", "")).lower()
    return (
        kind(spec) == "string"
        and "enum" not in spec
        and "default" not in description
        and not name_words(name) & _FORMED
    )


def _asking(name: str, spec: dict[str, Any]) -> str:
    """What the parameter asks for, as a text to compare phrases with: its name's words
    and its description ("cell compartment: The specific cell compartment.")."""
    return f"{' '.join(split_words(name))}: {spec.get('description', '')}"


def _own_words(card: ToolCard) -> set[str]:
    """The first letters of the words of the tool's name and description and of its
    parameters' names and descriptions."""
    texts = [card.name, card.description]
    for name, spec in card.properties.items():
        texts += [name, str(spec.get("description", ""))]
    return {word[:_PREFIX] for text in texts for word in split_words(text)}


def _given_words(value: Any) -> set[str]:
    """The first letters of the words of the values given (in lists and objects too)."""
    if isinstance(value, str):
        return {word[:_PREFIX] for word in split_words(value)}
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return {word for item in value for word in _given_words(item)}
    return set()


def _phrases(task: str, excluded: set[str]) -> list[str]:
    """The task's runs of one to three words that could be a value, each once."""
    words = list(_WORD.finditer(task))
    found: dict[str, None] = {}
    for start, first in enumerate(words):
        for end in range(start, min(start + _LONGEST, len(words))):
            word = words[end]
            between = task[words[end - 1].end() : word.start()] if end > start else ""
            if between.strip() or not _may_be_in_a_value(word[0], excluded):
                break
            found[task[first.start() : word.end()]] = None
            if len(found) == _MOST_PHRASES:
                return list(found)
    return list(found)


def _may_be_in_a_value(word: str, excluded: set[str]) -> bool:
    """Whether `word` may be part of a value: no stop word or preposition, no past
    participle ("based", "located"; "bed", "red", "speed" may be), none of `excluded`
    (words by their first letters)."""
    lowered = word.lower()
    participle = len(lowered) > _SHORT_WORD and lowered.endswith("ed") and lowered[-3] != "e"
    if lowered in _NOT_IN_A_VALUE or participle or len(lowered) < 2:
        return False
    parts = split_words(word)
    return bool(parts) and not any(part[:_PREFIX] in excluded for part in parts)


def _most_like(phrases: list[str], likeness: list[float], taken: set[str]) -> str | None:
    """The phrase most like the parameter, not taken already and like it enough; a
    longer phrase holding it if about as like."""
    order = sorted(
        (i for i in range(len(phrases)) if phrases[i] not in taken), key=lambda i: -likeness[i]
    )
    if not order or likeness[order[0]] < LEAST_LIKE:
        return None
    best = phrases[order[0]]
    holding = [
        i
        for i in order
        if phrases[i] != best
        and re.search(rf"(?<!\w){re.escape(best)}(?!\w)", phrases[i])
        and likeness[i] >= likeness[order[0]] - LONGER_BY
    ]
    return max((phrases[i] for i in holding), key=len, default=best)

"""What a task seeks: the thing it names after its question or command ("What is the
freezing point of water …" seeks a freezing point, "Calculate the area of a triangle …"
an area), and which of those words a tool's words lack. A tool that shares a task's
words but not what it seeks is a near miss (a boiling point calculator for a freezing
point), one the judge should doubt."""

from __future__ import annotations

import re
from collections.abc import Collection
from itertools import islice

from toolrun.selection.quotes import QUOTED
from toolrun.selection.text import NUMBER_WORDS, STOP_WORDS, blanked, stem, words

# An article, and a count: "the 3 largest cities" seeks the largest cities.
_ARTICLE = r"(?:me\s+)?(?:(?:the|a|an|my|our|some|all)\s+)?(?:\d[\d,.]*\s+)?"
# What comes before the thing sought: a question ("what is", "what's"; "which are" at a
# sentence's start, not "…, which is a trademark") or a command to work it out.
_LEAD = re.compile(
    r"(?:\bwhat|(?:^|(?<=[.?!\n]))[ \t]*which)(?:\s+(?:is|are|was|were|will\s+be|would\s+be)"
    r"|['\u2019]s)\s+" + _ARTICLE + r"|\b(?:calculate|compute|determine|estimate|find(?:\s+out)?"
    r"|get|give\s+me|tell\s+me|identify|predict|show\s+me|how\s+(?:much|many))\s+" + _ARTICLE,
    re.IGNORECASE,
)
# What ends it: a preposition, an auxiliary verb, a conjunction, a clause ("whether it
# is prime"), punctuation or a number.
_END = re.compile(
    r"\b(?:of|for|in|on|at|with|from|to|by|that|which|who|when|if|given|after|between"
    r"|whether|how|why"
    r"|under|using|is|are|was|were|do|does|did|will|would|can|could|should|has|have|had"
    r"|and|or|based|where|within|over|per|since|during|as|than|near|around|about)\b"
    r"|[,.?!;:()\"\d]|['\u2019](?!s\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]{2,}(?:['\u2019]s\b)?")
# Words that say nothing of what is sought: "the names of proteins" seeks proteins.
VAGUE = words(
    """name names list lists one ones information info detail details data way ways thing
    things something anything more most kind kinds type types sort sorts total overall
    latest best good top important main next out current new general specific selection
    much many number numbers today tonight tomorrow yesterday now right up"""
)
MOST_WORDS = 4
MOST_LEADS = 8  # questions and commands looked at, the first ones
LONGEST = 200  # characters a phrase sought may run to
PREFIX = 6  # stems this long or longer match one they begin: "multipl", "multipli"


def sought(task: str) -> tuple[str, ...] | None:
    """The words of what `task` seeks (at most MOST_WORDS, lowercase), or None where it
    does not say so: no question or command of that form among its first MOST_LEADS, or
    only names, values and vague words after them. Quoted text is a value, not the
    task's question."""
    text = blanked(task, [quoted.span() for quoted in QUOTED.finditer(task)])
    for lead in islice(_LEAD.finditer(text), MOST_LEADS):
        start = lead.end()
        while True:
            # Looked for a little past LONGEST, so a word cut at the window's end is
            # never taken for a whole one ("of" of "office").
            end = _END.search(text, start, start + 2 * LONGEST)
            stop = len(text) if end is None else end.start()
            if stop - start > LONGEST:
                break  # a phrase that runs on names no one thing
            phrase = text[start:stop]
            telling = _telling(phrase)
            if telling:
                return tuple(telling[:MOST_WORDS])
            if end is None or end.group().lower() != "of" or not _only_vague(phrase):
                break  # "the BMI of a person" seeks a BMI, not a person
            start = end.end()  # "the names of proteins": what follows "of"
    return None


def _telling(phrase: str) -> list[str]:
    """The words of `phrase` that say what is sought, lowercase, each once (by its stem:
    "city" and "cities" are one): no stop word, vague word or number word, no name (a
    capitalised word or an acronym is a value, not a kind of thing) and no possessor
    ("today's date" seeks a date)."""
    telling: dict[str, str] = {}  # by stem
    for word in _WORD.findall(phrase):
        lower = word.lower()
        stemmed = stem(lower)
        if word.endswith(("'s", "\u2019s")) or word[0].isupper() or stemmed in telling:
            continue
        if lower not in STOP_WORDS and lower not in VAGUE and lower not in NUMBER_WORDS:
            telling[stemmed] = lower
    return list(telling.values())


def _only_vague(phrase: str) -> bool:
    """Whether `phrase` holds words, all of them stop words or vague ones: no name."""
    found = [word.lower() for word in _WORD.findall(phrase)]
    return bool(found) and all(word in STOP_WORDS or word in VAGUE for word in found)


def lacked(seeks: tuple[str, ...] | None, tool_words: Collection[str]) -> list[str]:
    """The words of what the task seeks (`sought`) whose stems the tool's words (stems)
    lack; none where the task does not say what it seeks."""
    return [word for word in seeks or () if not _has(tool_words, stem(word))]


def _has(tool_words: Collection[str], word: str) -> bool:
    """Whether the tool's words hold `word`, or, for a long stem, one that begins it or
    that it begins."""
    if word in tool_words:
        return True
    if len(word) < PREFIX:
        return False
    return any(
        len(other) >= PREFIX and (other.startswith(word) or word.startswith(other))
        for other in tool_words
    )

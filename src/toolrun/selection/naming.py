"""Values whose parameter the words just before them name, for step 5 (`arguments`):
"the subject 'Weekly report'", "case number CA123", "title Notes"."""

from __future__ import annotations

import functools
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import Facts
from toolrun.selection.kinds import forget
from toolrun.selection.numbering import LINKING, name_words
from toolrun.selection.placing import written_place
from toolrun.selection.text import STOP_WORDS, split_words, stem

# Parameter name words too common to say on their own which value a task means.
GENERIC = frozenset(
    {"name", "id", "identifi", "uuid", "type", "valu", "data", "number", "text", "string"}
    | {"code"}
)
_NEAR = 3  # words before a string value that may name its parameter


def named_strings(names: list[str], card: ToolCard, facts: Facts) -> dict[str, tuple[Any, str]]:
    """Strings, codes, names and numbers (as text) whose parameter the words just before
    them name ("the subject 'Weekly report'", "case number CA123"), each to the parameter
    whose name they cover best."""
    candidates: list[tuple[str, list[str], list[Any]]] = [
        (value, facts.before.get(value, []), pool)
        for pool in (facts.quoted, facts.codes, facts.names, facts.identifiers, facts.paths)
        for value in pool
    ]
    candidates += [
        (_as_text(n.value), n.before, facts.numbers)
        for n in facts.numbers
        if not (n.spelt or n.percent)
    ]
    heads = [_head(name) for name in names]
    scored = []
    for place, (_, before, _) in enumerate(candidates):
        near = before[-_NEAR:]
        for order, name in enumerate(names):
            if heads[order] in near and (said := _said(name, near)):
                scored.append((-said, place, order))
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


def _said(name: str, before: list[str]) -> float:
    """How much of parameter `name` the words just before a value say (0: not enough):
    its head word (the last one that is not generic: "date" of movie_date) must be among
    them, with only linking words after it ("the subject is 'Hi'"); a name of stop words
    only ("to") says nothing."""
    words, head = name_words(name), _head(name)
    near = before[-_NEAR:]
    if not head or head not in near:
        return 0.0
    between = near[len(near) - near[::-1].index(head) :]
    if not set(between) <= LINKING | words | GENERIC:
        return 0.0
    return len(words & set(near)) / len(words)


@functools.lru_cache(maxsize=4096)
def _head(name: str) -> str:
    """The word of a parameter's name that says what it is: the last that is not generic
    ("date" of movie_date, "bot" of botId); none for a name of stop words ("to")."""
    words = name_words(name)
    if words <= STOP_WORDS:
        return ""
    telling = [stem(w) for w in split_words(name) if not w.isdigit()]
    telling = [w for w in telling if w not in GENERIC]
    return telling[-1] if telling else next(iter(sorted(words)))


def _remove(pool: list[Any], value: str) -> None:
    for item in pool:
        if item == value or (not isinstance(item, str) and _as_text(item.value) == value):
            pool.remove(item)
            return


def _as_text(value: float | int) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)

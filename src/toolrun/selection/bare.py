"""Words a task names by a parameter's noun, for step 5 (`arguments`), where no other
rule gave the required parameter a value: "check out the branch feature-x", "a branch
called experiment", "move to the staging branch" — a value written without quotes or
capitals, which the rules for quotes, codes, paths and names do not read."""

from __future__ import annotations

import re
from typing import Any

from toolrun.selection.asked import PATH_WORDS, URL_WORDS
from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import Facts
from toolrun.selection.kinds import forget, own_words
from toolrun.selection.naming import GENERIC, head_of
from toolrun.selection.text import NUMBER_WORDS, STOP_WORDS, split_words, stem, words

# A value as written: a word, with the marks names of branches, remotes and revisions
# carry ("release/2.0", "HEAD~2", "v1.0", "feature-x").
_VALUE = r"[A-Za-z0-9][\w./~^@-]*(?<![./])"
# Words before a noun that say which one without naming it ("the current branch", "a new
# branch", "the last commit"), and words after it that go on ("the branch now", "the
# branch names"): never a value.
_NOT_VALUES = words(
    """new current other same remote local default whole existing previous next last first
    another own given separate right wrong feature topic tracking upstream working old
    latest recent active checked right now again here there too back off away out up down
    over instead already later locally remotely first one ones name names list each every
    both following above below after before like about into onto without git different
    correct proper specific through"""
)
_MARKED = re.compile(r"[\d./~^@_-]")  # "feature-x", "v2", "release/2.0": a name, not a word
_CALLED = frozenset({"called", "named"})  # "a branch called experiment"
_DETERMINERS = r"(?:the|a|an|my|our|your|this|that)"


def bare_named(names: list[str], card: ToolCard, facts: Facts) -> dict[str, tuple[Any, str]]:
    """For each required one of `names` (free-text parameters no other rule filled), a
    word the task names by the parameter's noun: the word after the noun where "called"
    or "named" comes between or it is written as a name ("the branch feature-x",
    "release/2.0", "a branch called experiment"), else the word between a determiner
    and the noun ("the staging branch"). A parameter with a generic name ("name") is
    named by the tool's subject ("branch" for git_branch_create), and only the first way;
    a path's or a URL's parameter takes none (they have their own rules)."""
    found: dict[str, tuple[Any, str]] = {}
    task = facts.whole
    for name in [n for n in names if n in card.required and not _for_a_place(n, card)]:
        own = _own_nouns(name)
        value = _after_noun(task, own or _subject(card))
        if value is None and own:
            value = _before_noun(task, own)
        if value is None or value.lower() in facts.used:
            continue
        found[name] = (value, "named by its noun in the task")
        forget(facts, value)
    return found


def _for_a_place(name: str, card: ToolCard) -> bool:
    """Whether the parameter is for a path or a URL (its name, or its description's first
    words: "A directory inside the repository")."""
    opening = set(str(card.properties[name].get("description", "")).lower().split()[:4])
    return bool(own_words(name) & (PATH_WORDS | URL_WORDS) or opening & PATH_WORDS)


def _own_nouns(name: str) -> frozenset[str]:
    """The parameter's head word as written, singular ("branch"; none for a generic
    name): a plural names no one value ("merge the two branches")."""
    head = head_of(name)
    if not head or head in GENERIC:
        return frozenset()
    return frozenset(word for word in own_words(name) if stem(word) == head)


def _subject(card: ToolCard) -> frozenset[str]:
    """The words of the tool's name as written, generic ones aside."""
    return frozenset(w for w in split_words(card.name) if stem(w) not in GENERIC)


def _after_noun(task: str, nouns: frozenset[str]) -> str | None:
    for match in re.finditer(rf"\b([A-Za-z]+)(?=\s+(?:(called|named)\s+)?({_VALUE}))", task):
        marked = match[2] or _MARKED.search(match[3])
        if match[1].lower() in nouns and marked and _a_value(match[3]):
            return match[3]
    return None


def _before_noun(task: str, nouns: frozenset[str]) -> str | None:
    """The word between a determiner and one of `nouns` ("the staging branch"), or
    between "to" or "for" and one where it is written as a name ("hand off to the
    log-triage agent", "to log-triage agent"; not "to staging branch")."""
    for match in re.finditer(
        rf"\b({_DETERMINERS}|to|for)\s+(?=({_VALUE})\s+([A-Za-z]+)\b)", task, re.I
    ):
        determined = match[1].lower() not in ("to", "for")
        named = determined or _MARKED.search(match[2]) is not None
        if match[3].lower() in nouns and named and _a_value(match[2]):
            return match[2]
    return None


_NOT_A_VALUE = STOP_WORDS | _NOT_VALUES | _CALLED | frozenset(NUMBER_WORDS)


def _a_value(word: str) -> bool:
    lowered = word.lower()
    return lowered not in _NOT_A_VALUE

"""Step 5's values a task gives a role with "as": "who has black as their special
request" gives `special` black, "set walking as the travel mode" gives `travel_mode`
walking — a word no parameter took, whose role, right after "as", starts with the
parameter's name."""

from __future__ import annotations

import re

from toolrun.selection.facts import Facts
from toolrun.selection.kinds import Found, forget, own_words
from toolrun.selection.text import STOP_WORDS, split_words, stem

# A word (after a space, a quote or a bracket: not "doe" of "john.doe"), "as", a
# determiner or none, then at most three words of its role. A word is whole and of at
# most 41 characters: a long run of "a-a-a…" is none, nor read from each "-".
_AS_ROLE = re.compile(
    r"(?<![^\s\"'(\[])(?P<value>[a-z][\w-]{0,40})\s+as\s+"
    r"(?:(?:the|their|his|her|its|my|our|your|a|an)\s+)?"
    r"(?P<role>[a-z]+(?:[ \t_-]+[a-z]+){0,2})",
    re.I,
)
# Words before "as" that are no value: "such as", "known as the capital", "as soon as",
# "acting as the host", "use it as the default", "listed as the owner".
_NOT_VALUES = STOP_WORDS | frozenset(
    {"such", "well", "same", "so", "soon", "long", "far", "much", "many", "just", "only"}
    | {"known", "act", "acts", "acting", "serve", "serves", "serving", "work", "works"}
    | {"working", "use", "used", "set", "setting", "treat", "treated", "seen", "shown"}
    | {"written", "one", "him", "her", "something", "anything", "listed", "marked"}
    | {"defined", "described", "regarded", "registered", "designated", "classified"}
    | {"labeled", "labelled", "tagged", "saved", "stored", "exported", "sent", "given"}
)
_AS = re.compile(r"\sas\s", re.I)
_MOST = 16  # roles taken: a task gives a few


def named_as(names: list[str], task: str, facts: Facts) -> Found:
    """For each text parameter in `names` whose name's words are all among the words of
    a role the task gives with "as", the first of them first ("black as their special
    request" for `special`; not "the document as PDF format" for `format`), the word
    before "as", in the task's order; not a word that says how ("such as", "known as",
    "listed as"), nor one a parameter took ("Paris" for a city, "whoami" of a command
    "whoami as the root user")."""
    found: Found = {}
    if not names or not _AS.search(task):
        return found
    taken = {word for used in facts.used for word in [used, *used.split()]}
    wanted = {name: {stem(word) for word in own_words(name)} for name in names}
    for match in _AS_ROLE.finditer(task):
        value = match["value"]
        lowered = value.lower()
        if lowered in _NOT_VALUES or lowered in taken:
            continue
        role = [stem(word) for word in split_words(match["role"])]
        for name, words in wanted.items():
            if name not in found and words and role[0] in words and words <= set(role):
                found[name] = (value, 'the role given with "as"')
                forget(facts, value)
                taken.add(lowered)
                break
        if len(found) >= _MOST or len(found) == len(names):
            break
    return found

"""Step 5's values a task gives a role with "as": "who has black as their special
request" gives `special` black, "set walking as the travel mode" gives `travel_mode`
walking — a word no other rule reads as a value (it is neither quoted nor a name), whose
role, right after "as", is the parameter's name."""

from __future__ import annotations

import re
from itertools import islice

from toolrun.selection.facts import Facts
from toolrun.selection.kinds import Found, forget, own_words
from toolrun.selection.text import STOP_WORDS, split_words, stem

# A word, "as", a determiner or none, then at most three words of its role. (A word is
# whole, of at most 41 characters: a long run of "a-a-a…" is none, nor read from each "-".)
_AS_ROLE = re.compile(
    r"(?<![\w-])(?P<value>[A-Za-z][\w-]{0,40})\s+as\s+"
    r"(?:(?:the|their|his|her|its|my|our|your|a|an)\s+)?"
    r"(?P<role>[A-Za-z]+(?:[ \t_-]+[A-Za-z]+){0,2})",
)
# Words before "as" that are no value: "such as", "known as the capital", "as soon as",
# "acting as the host", "use it as the default".
_NOT_VALUES = STOP_WORDS | frozenset(
    {"such", "well", "same", "so", "soon", "long", "far", "much", "many", "just", "only"}
    | {"known", "act", "acts", "acting", "serve", "serves", "serving", "work", "works"}
    | {"working", "use", "set", "setting", "treat", "seen", "shown", "written", "it", "one"}
    | {"them", "him", "her", "this", "that", "these", "those", "something", "anything"}
)
_AS = re.compile(r"\sas\s", re.I)
_MOST = 16  # "as" looked at: a task gives a few roles


def named_as(names: list[str], task: str, facts: Facts) -> Found:
    """For each text parameter in `names` (those no other rule filled: "facial
    expressions", read before, stays whole) whose name's words are all among the words
    of a role the task gives with "as", the word before "as" ("black as their special
    request"), in the task's order; not a word that says how ("such as", "known as",
    "listed as": a word in -ed)."""
    found: Found = {}
    if not names or not _AS.search(task):
        return found
    for match in islice(_AS_ROLE.finditer(task), _MOST):
        value = match["value"]
        lowered = value.lower()
        if lowered in _NOT_VALUES or (lowered.endswith("ed") and len(lowered) > 4):
            continue
        role = {stem(word) for word in split_words(match["role"])}
        for name in names:
            wanted = {stem(word) for word in own_words(name)}
            if name not in found and wanted and wanted <= role:
                found[name] = (value, 'the role given with "as"')
                forget(facts, value)
                break
    return found

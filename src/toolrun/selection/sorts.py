"""Step 5's kinds of a thing: for a "room_type" parameter the word the task puts before
"room" ("a single room"), for a "genre" described as the "Genre of music" the one
before "music" ("jazz music"; not "live music")."""

from __future__ import annotations

import functools
import re

from toolrun.selection.text import STOP_WORDS, split_words

_SORTS = frozenset({"genre", "type", "kind", "category", "style"})
_SORT_OF = re.compile(
    r"(?:the\s+)?(?:genre|type|kind|category|style)\s+of\s+(?:the\s+)?(\w+)", re.I
)
_WORD_BEFORE = re.compile(r"([A-Za-z][\w-]*)$")  # the word a kind's noun follows
_OPTIONAL = re.compile(r"^\s*\(?optional\)?[.:,]?\s*", re.I)  # "Optional. The type of crime."
# Words before a kind's noun that say something else of it ("live music", "a cheap
# vehicle", "the best product").
_NO_SORT = frozenset(
    {"live", "good", "great", "best", "new", "old", "nice", "loud", "some", "any", "cheap"}
    | {"expensive", "big", "small", "local", "popular", "famous", "favorite", "favourite"}
    | {"top", "other", "same", "different", "next", "last", "first", "certain", "specific"}
)

# Words in -est that are no superlative: "a forest cabin", "southwest cuisine".
_NOUNS_IN_EST = frozenset(
    {"forest", "interest", "harvest", "request", "contest", "protest", "manifest", "digest"}
    | {"honest", "modest", "earnest", "arrest", "unrest", "conquest", "tempest", "inquest"}
    | {"bequest", "behest", "suggest", "invest", "midwest"}
)


def _superlative(word: str) -> bool:
    """ "nearest", "cheapest", "largest": what is asked of it, no kind of it."""
    return (
        len(word) > 5
        and word.endswith("est")
        and word not in _NOUNS_IN_EST
        and not word.endswith(("west", "east"))  # "southwest", "northeast"
    )


def sort_of(name: str, description: str, task: str) -> str | None:
    """For a "room_type" parameter, the word the task puts before "room" ("a single
    room"); for a "genre" described as the "Genre of music", the one before "music"
    ("jazz music"; not a word that says something else of it: "live music", "a cheap
    vehicle", "relaxing music")."""
    noun = _sorted_noun(name) or _described_noun(name, description)
    if not noun or noun not in task.lower():
        return None
    kind_of = rf"(?<=[A-Za-z0-9])(?:[ -]{re.escape(noun)}(?:e?s)?|(-){re.escape(noun)}l?ed)\b"
    refused = STOP_WORDS | _NO_SORT | {"", noun}
    kinds = []
    for found in re.finditer(rf"{kind_of}(?:\s+([\w-]+))?", task, re.I):
        before = _WORD_BEFORE.search(task, max(found.start() - 40, 0), found.start())
        word = before[1] if before else ""
        lowered = word.lower()
        if lowered in refused or lowered.endswith("ing") or _superlative(lowered):
            continue
        # "a gas-fueled car" names its kind; "the official crime rate" a kind of rate
        heads = found[1] is None and (found[2] or "").lower() not in STOP_WORDS
        kinds.append((word, heads))
    # One whose noun heads no longer name first: "violent crime", not "the official crime
    # rate" (a kind of rate) where the task has both.
    kinds.sort(key=lambda kind: kind[1])
    return kinds[0][0] if kinds else None


@functools.lru_cache(maxsize=4096)
def _described_noun(name: str, description: str) -> str:
    """ "music" of a parameter named "genre" (or type, kind, category, style) described
    as the "Genre of music to be played"."""
    words = split_words(name)
    if len(words) != 1 or words[0] not in _SORTS:
        return ""
    found = _SORT_OF.match(_OPTIONAL.sub("", description))
    return found[1].lower() if found and found[1].lower() not in STOP_WORDS else ""


@functools.lru_cache(maxsize=4096)
def _sorted_noun(name: str) -> str:
    """ "room" of room_type or roomKind: what the parameter says the kind of."""
    words = split_words(name)
    return words[-2] if len(words) > 1 and words[-1] in ("type", "kind") else ""

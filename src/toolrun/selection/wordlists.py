"""Lowercase words a task writes as one list, for `facts`: "tomatoes and lettuce", "red,
green and blue", and items of a few words each where the list shows them ("efficient,
organized, easy going and compassionate", "including points per game, assists, and
minutes per game")."""

from __future__ import annotations

import re

from toolrun.selection.text import STOP_WORDS

# A word (hyphens inside), a comma, or any other character (which ends a list).
_TOKEN = re.compile(r"[A-Za-z][A-Za-z-]*|,|\S")
_MOST_WORDS = 3  # words of one item
_MOST_ITEMS = 12  # items read back from one "and": a long run costs no more than that
# Words that end an item (besides stop words): a verb of being ("I am efficient"), a
# word that introduces a list ("including points per game").
_INTRODUCING = frozenset({"including", "include", "includes", ":"})  # a list comes next
_BOUNDARY = STOP_WORDS | {"am", "is", "are", "was", "were", "be"} | _INTRODUCING


def word_lists(text: str) -> list[list[str]]:
    """Each list of lowercase words `text` writes with "and" before its last item: the
    items between commas whole (up to three words); the first and the last of more than
    one word only where an item between them has several too or a word that introduces
    a list comes first ("including points per game, assists, and minutes per game"), the
    first from the last word that ends an item (a stop word, "am", "including"; a gerund
    first aside) and no longer than the others, the last no longer than those before it
    ("red, green and blue cars": blue; "buy eggs and milk today": eggs and milk)."""
    tokens = [match[0] for match in _TOKEN.finditer(text)]
    found = []
    floor = 0  # where the last list ended: its last item starts no other
    for at, word in enumerate(tokens):
        if word != "and" or at < floor:
            continue
        last, after = _last_item(tokens, at + 1)
        items, before = _items_before(tokens, at, floor)
        if not last or not items:
            continue
        floor = after
        first, middle = items[0], items[1:]
        if not any(len(item) > 1 for item in middle) and before not in _INTRODUCING:
            first, last = first[-1:], last[:1]
        last = last[: max(len(item) for item in [first, *middle])]  # "blue", not "blue cars"
        first = first[-max(len(item) for item in [*middle, last]) :]
        while len(first) > 1 and first[0].endswith("ing"):
            first = first[1:]  # "selling tomatoes": tomatoes
        found.append([" ".join(item) for item in [first, *middle, last]])
    return found


def _last_item(tokens: list[str], start: int) -> tuple[list[str], int]:
    """The words after "and" at `start` (stop words first aside: "and also pet food"),
    up to three up to a word that ends an item or anything but a word; and where they
    end."""
    skipped = 0
    while start < len(tokens) and tokens[start] in STOP_WORDS and skipped < _MOST_WORDS:
        start, skipped = start + 1, skipped + 1
    words = []
    for token in tokens[start : start + _MOST_WORDS]:
        if not _a_word(token):
            break
        words.append(token)
    return words, start + len(words)


def _items_before(tokens: list[str], end: int, floor: int) -> tuple[list[list[str]], str]:
    """The items before the "and" at `end` and from `floor` on, first to last: runs of
    words between commas (up to three words each), the first from a word that ends an
    item; and the word (or mark) just before the first, "" where none."""
    items: list[list[str]] = []
    at = end - 1
    if at >= floor and tokens[at] == ",":  # "assists, and minutes"
        at -= 1
    while at >= floor and len(items) < _MOST_ITEMS:
        words: list[str] = []
        while at >= floor and _a_word(tokens[at]) and len(words) < _MOST_WORDS:
            words.insert(0, tokens[at])
            at -= 1
        if not words:
            break
        items.insert(0, words)
        if at < floor + 1 or tokens[at] != ",":  # the list starts in this item
            break
        at -= 1
    return items, tokens[at].lower() if at >= floor else ""


def _a_word(token: str) -> bool:
    """A lowercase word of two letters or more that may be part of an item."""
    return len(token) > 1 and token[0].islower() and token not in _BOUNDARY

"""Words for matching: identifiers split into their parts, stop words dropped, stems; and
text with parts blanked out, its places kept."""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]  # no stubs


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text` (word lists written as prose)."""
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[0-9]+|[a-z]+")
STOP_WORDS = words(
    """a an and are as at be by can could do does for from get give given how i if in into is
    it its me my of on or please show tell that the their them then there these this those to
    us using want was what when where which who will with would you your can't i'd i'm let
    some any all also just should need like find"""
)
NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        (
            *("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
            *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
            *("eighteen", "nineteen", "twenty"),
        ),
        start=2,
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
_stemmer = snowballstemmer.stemmer("english")


def split_words(text: str) -> list[str]:
    """Lowercase words of `text`, identifiers split: getUserID, get_user_id → get user id."""
    return [word.lower() for word in _WORD.findall(text)]


# Plurals the stemmer leaves apart from their singular: "one child" for "children".
IRREGULAR_PLURALS = {
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "geese": "goose",
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer.stemWord(IRREGULAR_PLURALS.get(word, word)))


def terms(text: str) -> list[str]:
    """The stems of the words of `text` that carry meaning."""
    return [stem(word) for word in split_words(text) if word not in STOP_WORDS]


def blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with `spans` (in order, apart) as spaces: later places stay where they were."""
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        parts += [text[last:start], " " * (end - start)]
        last = end
    return "".join([*parts, text[last:]])


# What raises or lowers a note written as its capital letter: "C#", "B flat major".
ACCIDENTAL = re.compile(
    r"(?<=[A-G])(?:[#\u266f\u266d]|[ \t]+(?:sharp|flat)(?=[ \t]+(?:major|minor|scale|chord)\b))"
)

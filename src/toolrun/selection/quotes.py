"""Quoted text in a task, for `facts`: what each quote holds, as the task writes it
(a quote never closed runs to the end), the quotes that are numbers ("the pharmacy
with ID "87""), and quotes around the whole task, which hold no value."""

from __future__ import annotations

import re

QUOTES = frozenset("\"'“\u2018`")  # the marks that may open a quote

# "it's" inside a quote does not end it; a lone apostrophe ("users' files") opens none.
# A curly quote holds no other opening mark, each read once: linear on "“a“a“a…". And
# a double quote opened at the start or after a space, a colon or a parenthesis and
# never closed, to the end, read once (possessive: linear): 'send the message "Don't
# forget to feed the cat.' (not the inches of '5" screen'); its trailing spaces are
# none of it (`_held`).
QUOTED = re.compile(
    r"\"([^\"]+)\"|(?<![\w'])'((?:[^'\s]|(?<=\w)'(?=\w))(?:[^']|(?<=\w)'(?=\w))*)'(?!\w)"
    r"|“([^”“]++)”|\u2018([^\u2019\u2018]++)\u2019|`([^`]+)`"
    r"|(?<![^\s:(])[\"“](?=\S)([^\"“”]++)$"
)
CODE = 5  # QUOTED's group of a quote in backticks (code)
PROSE_WORDS = 3  # the words of a quote that hands over prose (`quotes_prose`)
# An identifier or a name, no sentence: no space, or every word capitalised.
_UNWORDED = re.compile(r"\S+|[A-Z0-9][^\s.]*(?: [A-Z0-9][^\s.]*)*")
_QUOTED_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")  # "87", "14.9": a number in quotes


def numbers_written_back(
    text: str, quotes: list[re.Match[str]], task: str
) -> tuple[str, dict[int, str]]:
    """`text` with each quoted number written back where its quote was blanked, and
    those quotes by where they start: "the pharmacy with ID "87"" has the number 87 too
    (and the quoted "87" for a text)."""
    pieces, last, found = [], 0, {}
    for match in quotes:
        start, end = _held(match, task)
        if _QUOTED_NUMBER.fullmatch(task[start:end]):
            pieces += [text[last:start], task[start:end]]
            last, found[start] = end, task[start:end]
    return "".join([*pieces, text[last:]]), found


def quote(match: re.Match[str], task: str) -> str:
    """What a quote holds, as `task` writes it: a URL or an e-mail address quoted alone
    was blanked in the text the quote was found in ("the subject "a@b.com"")."""
    start, end = _held(match, task)
    return task[start:end]


def _held(match: re.Match[str], text: str) -> tuple[int, int]:
    """Where a quote's text starts and ends in `text` (a quote never closed: without the
    spaces that end it, nor the period that ends the task after an identifier or a name:
    'with the ID "rOBhSVKGVKe.', 'the course named "Cypress Point Club.'; a sentence
    keeps its own: 'the message "Don't forget to feed the cat.')."""
    group = next(i for i, found in enumerate(match.groups(), 1) if found)
    start, end = match.span(group)
    if group == QUOTED.groups:  # never closed
        held = text[start:end].rstrip()
        end = start + len(held)
        if held.endswith(".") and _UNWORDED.fullmatch(held[:-1]):
            end -= 1
    return start, end


def quoted_strings(text: str) -> list[str]:
    """The strings `text` quotes ("'a,b'", "\"x\""; an apostrophe is no quote)."""
    return [text[slice(*_held(match, text))] for match in QUOTED.finditer(text)]


def quotes_prose(task: str) -> bool:
    """Whether `task` quotes prose: PROSE_WORDS words or more in quote marks, not code
    in backticks — a message, a file's line, a prompt it hands over ("commit with the
    message 'book a table for two'"), not what it asks about ("what does `git rebase -i`
    do?", "what does 'idempotent' mean?")."""
    return any(
        match[CODE] is None and len(quote(match, task).split()) >= PROSE_WORDS
        for match in QUOTED.finditer(task)
    )


def unwrapped(task: str) -> str:
    """`task` without quotes around the whole of it, which hold no value ("'Get the
    price of Apple.'"); the same length, so that places in it hold."""
    text = task.strip()
    start = len(task) - len(task.lstrip())
    for mark in ("'", '"'):
        if len(text) > 2 and text[0] == text[-1] == mark and mark not in text[1:-1]:
            end = start + len(text) - 1
            return f"{task[:start]} {task[start + 1 : end]} {task[end + 1 :]}"
    return task

"""The parts of a task that say when or why, not what: "check which files are modified
before I commit", "list every line that imports it so I can fix them", "After the
refactor, tests/test_models.py still has …". A step they name comes before or after
the one asked for (the commit, the fix), so their words are no part of what the task
asks a tool to do: matching by words (step 3) and the steps' scenario and intent read
the task without them. Arguments are still found in the whole task. What a task quotes
is no aside ("commit with the message 'so we can ship'")."""

from __future__ import annotations

import re

from toolrun.selection.quotes import QUOTED
from toolrun.selection.text import blanked

_CONTEXT_WORDS = 6  # the most words of the context a task starts with
_PERSON = r"(?:i|we|you|they|he|she|it|someone|anyone|everyone|nobody|people|others)"
_SUBJECT = rf"(?:{_PERSON}|the\s+[\w-]+|my\s+[\w-]+|our\s+[\w-]+)"
_MODAL = r"(?:can|could|may|might|will|won'?t|don'?t|do\s+not|doesn'?t|does\s+not|can'?t)"
# An aside runs to its clause's end: a mark before a space or the end, a dash, a bracket
# or the end of the task ("Path.walk" and "config/settings.py" go on).
_REST = r"(?:[^.,;:!?()\u2014\u2013]|[.,;:!?](?=[^\s.,;:!?]))*"
_ASIDE = re.compile(
    r"(?:"
    # … before I commit · before committing · before they get staged (not "as it was
    # before the refactor": a time; after a word: a task that starts so says its context
    # first)
    rf"(?<=[\w'`)\]]\s)before\s+(?:{_PERSON}\b|\w+ing\b)"
    # so I can fix them · so that we don't forget · so the merge can continue
    rf"|\bso(?:\s+that)?\s+{_SUBJECT}\s+{_MODAL}\b"
    rf"){_REST}"
    # After the refactor, … · Before I commit: … · Once the build passes, … (a few words
    # up to a comma or a colon)
    r"|\A\W*(?:after|before|once|now\s+that|since|because)\b"
    rf"(?:\s+[^\s,:;!?]+){{1,{_CONTEXT_WORDS}}}?(?=[,:](?:\s|$))",
    re.IGNORECASE,
)
_FEWEST_LEFT = 2  # words the task must keep for its asides to be set aside


def without_asides(task: str) -> str:
    """`task` with its asides blanked out (places kept), or the whole of it where too
    little would be left."""
    quoted = blanked(task, [match.span() for match in QUOTED.finditer(task)])
    spans = [match.span() for match in _ASIDE.finditer(quoted)]
    if not spans:
        return task
    left = blanked(task, spans)
    return left if len(left.split()) >= _FEWEST_LEFT else task

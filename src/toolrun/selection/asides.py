"""The parts of a task that say when or why, not what: "check which files are modified
before I commit", "list every line that imports it so I can fix them", "After the
rebase, force-push my branch". A step they name comes before or after the one asked
for (the commit, the fix), so their words are no part of what the task asks a tool to
do: steps 1 to 3 (scenario, intent, matching by words) and step 4's words of the task
read it without them. Arguments (step 5) are still found in the whole task. What a
task quotes is no aside ("commit with the message 'so we can ship'"), nor a time that
is past ("what did README.md say before we rewrote it?": a revision), nor what a
change should make a thing do ("edit main.py so it doesn't print debug output")."""

from __future__ import annotations

import re

from toolrun.selection.quotes import QUOTED
from toolrun.selection.text import blanked

_CONTEXT_WORDS = 6  # the most words of the context a task starts with
# Who an aside's purpose is for: the asker or people, never the thing the task changes
# ("so it reads …", "so the server will listen on 8080" say what the change is).
_PERSON = r"(?:i|we|you|they|he|she|someone|anyone|everyone|nobody|people|others)"
_MODAL = r"(?:can|could|may|might|won'?t|don'?t|do\s+not|can'?t)"
# A step in the past is a time, not a step to come ("before we rewrote it").
_PAST_VERB = (
    r"(?:(?!(?:need|proceed|embed|feed|seed|speed|succeed|exceed|shed)\b)\w+ed|rewrote|wrote"
    r"|broke|made|did|had|was|were|got|left|came|went|took|ran|saw|began|found|gave|put|set"
    r"|split|cut)\b"
)
# An aside runs to its clause's end: a mark before a space or the end, a dash, a bracket,
# a new line, a word that starts another part of the task (the words `steps.clauses`
# splits at: "then", "also", "as well as" …) or "and" before a verb of asking ("… so I
# can fix them and show me git status"); "Path.walk" and "config/settings.py" go on.
_ASKING = (
    r"(?:show|tell|list|run|push|commit|open|read|check|give|find|print|make|create|delete"
    r"|add|stage|fetch|grep|search|write|edit|update|send|fix|start|stop|switch|diff|look)"
)
_NEXT_PART = (
    r"(?:\band\s+then|\bthen|\balso|\bafter\s+that|\bafterwards|\badditionally|\bfinally"
    rf"|\bnext|\bas\s+well\s+as|\bbesides|\band\s+{_ASKING})\b|\s-\s"
)
_REST = rf"(?:(?!{_NEXT_PART})[^.,;:!?()\n\u2014\u2013]|[.,;:!?](?=[^\s.,;:!?]))*"
_ASIDE = re.compile(
    r"(?:"
    # … before I commit · before committing · before they get staged (after a word or a
    # quote, not "as it was before the refactor": a time; a task that starts so says its
    # context first, below)
    rf"(?:(?<=[^\s.,;:!?]\s)|(?<=\s\s))before\s+(?:{_PERSON}\b(?!\s+{_PAST_VERB})|\w+ing\b)"
    # so I can fix them · so that we don't forget
    rf"|\bso(?:\s+that)?\s+{_PERSON}\s+{_MODAL}\b"
    rf"){_REST}"
    # After the rebase, … · Before I commit: … · Once the build passes, … (at most
    # _CONTEXT_WORDS words up to a comma or a colon, in the task's first sentence; not a
    # question, "Since which commit …", nor a time past, "Before we rewrote it, …")
    r"|\A\W*(?:after|before|once|now\s+that|since|because)\b"
    rf"(?!\s+(?:which|what|when|how|who|where)\b)(?!\s+{_PERSON}\s+{_PAST_VERB})"
    rf"(?:\s+(?:[^\s,:;.!?]|[.](?=\S))+){{1,{_CONTEXT_WORDS}}}?(?=[,:](?:\s|$))",
    re.IGNORECASE,
)
_FEWEST_LEFT = 2  # words the task must keep for its asides to be set aside
_WORD = re.compile(r"\w+")


def without_asides(task: str) -> str:
    """`task` with its asides blanked out (places kept), or the whole of it where too
    little would be left."""
    quoted = blanked(task, [match.span() for match in QUOTED.finditer(task)])
    spans = [match.span() for match in _ASIDE.finditer(quoted)]
    if not spans:
        return task
    left = blanked(task, spans)
    return left if len(_WORD.findall(left)) >= _FEWEST_LEFT else task

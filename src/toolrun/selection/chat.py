"""Tasks that ask for an answer in the chat: "paste it inline", "just explain", "in the
chat, don't save it anywhere", "without looking at any files", "your general opinion";
or that open with a question of knowledge or advice and name nothing of the workspace
("explain the difference between CSRF and XSS", "is git the same thing as GitHub?",
"how do I make a collapsible section in Markdown?": no path, file or URL).
The built-in tools work on the workspace (its files, its repository, its shell, the
web for it, a sub-agent in it); a task that says it wants none of that asks for none of
them, whatever it names ("give me a Makefile … in the chat", "what does `git rebase
-i` do? just explain"). A plugin's tool may still answer it ("the weather in Lisbon,
just tell me"), so it only ever turns a built-in tool down (`pipeline`)."""

from __future__ import annotations

import re

from toolrun.selection.facts import Facts

# What "no suitable tool" says of such a task.
CHAT_ONLY = "no suitable tool: the task asks for an answer in the chat, not a built-in tool's work"

_OBJECT = r"(?:it|them|that|this)"
_WORKSPACE = r"(?:the\s+(?:repo|repository|code|codebase|files?)|any\s+files?|anything)"
# The phrases that say so. Not "don't commit yet" nor "don't push": those say which git
# step not to take ("stage it, but don't commit yet" asks for git_add).
_CHAT_ONLY = re.compile(
    r"\b(?:"
    rf"(?:just\s+)?paste\s+(?:{_OBJECT}\s+)?(?:here|inline|in\s+(?:the\s+)?(?:chat|reply|answer))"
    rf"|(?:i'?ll|i\s+will|let\s+me)\s+(?:paste|type|add|put|run|do)\s+{_OBJECT}\s+(?:in\s+)?myself"
    r"|in\s+the\s+(?:chat|reply)"
    r"|(?:don'?t|do\s+not|never)\s+(?:save|write|store)\s+(?:it|them|anything)"
    r"|(?:don'?t|do\s+not)\s+(?:run|execute|change|modify|touch)\s+anything"
    rf"|(?:don'?t|do\s+not|no\s+need\s+to)\s+(?:touch|open|look\s+at|check)\s+{_WORKSPACE}"
    rf"|without\s+(?:looking\s+at|opening|touching|reading|running)\s+{_WORKSPACE}"
    r"|just\s+(?:explain|tell\s+me|the\s+text|give\s+me\s+the\s+(?:text|message|command))"
    r"|general\s+(?:advice|opinion|terms)|your\s+(?:general\s+)?opinion|conceptual(?:ly)?"
    r")\b",
    re.IGNORECASE,
)


# A question of knowledge or advice, as a task's first words (after "can you", "could
# you", "please"): "explain …", "what's the difference between …", "diff btw …", "is X
# the same as …", "how do I …", "should I …". Not "why …": "why does the build fail?"
# asks to look.
_KNOWLEDGE = re.compile(
    r"\A\W*(?:(?:can|could|would)\s+you\s+|please\s+)?"
    r"(?:explain|what'?s\s+the\s+difference|what\s+is\s+the\s+difference"
    r"|diff(?:erence)?\s+(?:btw|between)|is\s+(?:\S+\s+){0,4}?(?:the\s+same|better|worse|bad|good"
    r"|worth)|how\s+(?:do|should|can)\s+i|should\s+i|when\s+should)\b",
    re.IGNORECASE,
)


def asks_in_chat(task: str) -> str | None:
    """The words with which `task` asks for an answer in the chat, if it does: a phrase
    that says so anywhere, or a question of knowledge first where the task names no path,
    file or URL (`facts`)."""
    found = _CHAT_ONLY.search(task)
    if found is not None:
        return found[0]
    asked = _KNOWLEDGE.match(task)
    if asked is None:
        return None
    facts = Facts.of(task)
    return None if facts.paths or facts.urls else asked[0].strip()

"""Tasks that ask for an answer in the chat: "paste it inline", "in the chat, don't save
it anywhere", "I'll paste it in myself"; or, where the task names nothing of the
workspace (no path, file or URL, no repository, branch, build or commit of its own),
"just explain", "without looking at any files", "your general opinion", or a question
of knowledge or advice first ("explain the difference between CSRF and XSS", "is git
the same thing as GitHub?", "how do I make a collapsible section in Markdown?"). What
a task quotes is no part of it ("commit with the message 'docs: add a conceptual
overview'"). The built-in tools work on the workspace (its files, its repository, its
shell, the web for it, a sub-agent in it); a task that says it wants none of that asks
for none of them, whatever it names ("give me a Makefile … in the chat"). A plugin's
tool may still answer it ("the weather in Lisbon, just tell me"), so it only ever turns
a built-in tool down (`pipeline`), with the embedding model or without."""

from __future__ import annotations

import re

from toolrun.selection.facts import Facts
from toolrun.selection.quotes import QUOTED, quoted_strings
from toolrun.selection.text import blanked

# What "no suitable tool" says of such a task.
CHAT_ONLY = "no suitable tool: the task asks for an answer in the chat, not a built-in tool's work"

_OBJECT = r"(?:it|them|that|this)"
_WORKSPACE_PART = r"(?:the\s+(?:repo|repository|code|codebase|files?)|any\s+files?|anything)"
_CLAUSE_END = r"(?=\s*(?:[.,;:!?)](?![\w/-])|please\b|$))"  # not "reply.txt"
# Phrases that say so wherever they stand. Not "don't commit yet" nor "don't push":
# those say which git step not to take ("stage it, but don't commit yet" is git_add's).
_SAYS_SO = re.compile(
    r"\b(?:"
    rf"(?:just\s+)?paste\s+(?:{_OBJECT}\s+)?(?:here|inline|in\s+(?:the\s+)?(?:chat|reply|answer))"
    rf"|(?:i'?ll|i\s+will|let\s+me)\s+(?:paste|type|add|put|run|do)\s+{_OBJECT}\s+(?:in\s+)?myself"
    rf"|in\s+the\s+(?:chat|reply){_CLAUSE_END}|just\s+in\s+your\s+(?:chat|reply){_CLAUSE_END}"
    r"|(?:don'?t|do\s+not|never)\s+save\s+(?:it|them|anything)"
    r")\b",
    re.IGNORECASE,
)
# Phrases that say so where the task names nothing of the workspace: "read the config
# and just tell me the port" asks to read it. ("Don't change anything" says neither:
# "show me git status, don't change anything".)
_SAYS_SO_ALONE = re.compile(
    r"(?<![\w/.-])(?:"
    rf"(?:don'?t|do\s+not|no\s+need\s+to)\s+(?:touch|open|look\s+at|check)\s+{_WORKSPACE_PART}"
    rf"|without\s+(?:looking\s+at|opening|touching|reading|running)\s+{_WORKSPACE_PART}"
    r"|just\s+(?:explain|tell\s+me|the\s+text|give\s+me\s+the\s+(?:text|message|command))"
    r"|general\s+(?:advice|opinion|terms)|your\s+(?:general\s+)?opinion|conceptual(?:ly)?"
    r"|(?:a|any|good|some|general)\s+rules?\s+of\s+thumb"
    r")(?![\w/.-])",
    re.IGNORECASE,
)
# A term a question of knowledge asks about: a word, a number or an acronym, not a name
# from code ("log_level", "maxRetries", "app.cfg") nor one of this, our or the error.
_TERM_WORD = (
    r"(?!(?:this|these|that|those|our|my|your|the|its|their)\b)"
    r"(?:[A-Za-z][a-z'-]*|[A-Z0-9]+|\d+)(?![\w.])"
)
_TERM_WORDS = 3
# A question of knowledge or advice, as a task's first words (after "can you", "could
# you", "can you tell me", "please"): "explain …", "what's the difference between …",
# "diff btw …", "is X the same as …", "how do I …", "should I …", "what does X mean" and
# "what does X stand for" (X a quote or a term of at most _TERM_WORDS words: "what does
# the config key log_level mean" asks to look), "what are good practices for …". Not "why
# …": "why does the build fail?" asks to look; nor "what does X do?": "what does the
# deploy script do?" asks to read it; nor a question the task goes on to ask to look
# into ("… ? check our git log for examples").
_KNOWLEDGE = re.compile(
    r"\A\W*(?:(?:can|could|would)\s+you\s+(?:tell\s+me\s+)?|please\s+)?"
    r"(?:what\s+(?:does|do)\s+(?:the\s+(?:word|term|acronym|abbreviation|phrase|expression)\s+)?"
    rf"(?:{_TERM_WORD}\s+){{0,{_TERM_WORDS}}}(?:mean|stand\s+for)\b|what\s+mean\b"
    r"|what\s+(?:are|is)\s+(?:some\s+)?(?:a\s+)?(?:good|best)\s+practices?\b"
    r"|explain|what'?s\s+the\s+difference|what\s+is\s+the\s+difference"
    r"|diff(?:erence)?\s+(?:btw|between)|is\s+(?:\S+\s+){0,4}?(?:the\s+same|better|worse|bad|good"
    r"|worth)|how\s+(?:do|should|can)\s+i|should\s+i|when\s+should)\b",
    re.IGNORECASE,
)
# A later sentence that asks to look into the workspace ("… check our git log", "run it").
_LOOK_INTO = re.compile(
    r"[.?!;]\s+(?:(?:please|pls|then|and|now)\s+)?(?:check|look|run|open|read|search|grep"
    r"|list|find|fetch|compare)\b",
    re.IGNORECASE,
)
# What names the workspace's own repository, code, build or history: "this repo", "our
# codebase", "my branch", "the build", "these changes", HEAD, main, develop, "HEAD~3".
_WORKSPACE = re.compile(
    r"\b(?:this|the|our|my|these|those)\s+(?:repo|repository|project|codebase|code|branch"
    r"|branches|build|tests?|app|service|changes|commits?|pr|workspace|files?)\b"
    r"|\b(?:HEAD|main|master|develop|trunk)\b|~\d|\brepo'?s\b",
    re.IGNORECASE,
)


def asks_in_chat(task: str) -> str | None:
    """The words with which `task` asks for an answer in the chat, if it does: a phrase
    that says so anywhere; else, where the task names nothing of the workspace, a phrase
    that says so there or a question of knowledge first. Its quotes left out."""
    text = blanked(task, [quote.span() for quote in QUOTED.finditer(task)]).replace("\u2019", "'")
    found = _SAYS_SO.search(text)
    if found is not None:
        return " ".join(found[0].split())
    said = _SAYS_SO_ALONE.search(text)
    if said is not None:  # what the phrase names is no part of it: "without touching the repo"
        text = blanked(text, [said.span()])
    else:
        said = _KNOWLEDGE.match(text)
        if said is not None and _LOOK_INTO.search(text, said.end()):
            return None
    if said is None or _names_the_workspace(task, text):
        return None
    return " ".join(said[0].split())  # a quote's blank closed up


def _names_the_workspace(task: str, text: str) -> bool:
    """Whether `task` (`text`: its quotes and the phrase blanked) names a path, file or URL, or the
    workspace's repository, code, build or history (`_WORKSPACE`), in its words or as a
    quote of one word ("diff between `main` and `develop`"; not "what does `git rebase
    -i HEAD~3` do?", code it asks about)."""
    facts = Facts.of(task)
    if facts.paths or facts.urls or _WORKSPACE.search(text) is not None:
        return True
    return any(
        len(held.split()) == 1 and ("/" in held or _WORKSPACE.search(held) is not None)
        for held in quoted_strings(task)
    )

"""Step 5's booleans: a flag set where the task says what its name is about ("include
hidden files" for include_hidden, "with monitoring" for monitoringEnabled), unset after
a negation ("without hidden files"), and a flag that leaves out what is not something
(excludeInactive) set where the task asks for that something ("the active projects")."""

from __future__ import annotations

from typing import Any

from toolrun.selection.options import task_stems
from toolrun.selection.text import split_words, stem

# Words before a flag's words that turn it off, as stems (`task_stems` reads "don't" as
# "do not"): "disable the power-saving mode", "without hidden files".
_NEGATION = frozenset(stem(w) for w in ("no", "not", "without", "never", "disable", "exclude"))
# Words of a flag's name that make it a flag rather than say what it is about, which the
# task need not say: include_images is asked for by "I want to see images",
# monitoringEnabled by "with monitoring", closed_status by "whether it is closed"; and
# "only" first in a name (onlyRoot by "the root projects"; not readOnly by "read").
_FLAG_WORDS = frozenset(
    stem(word)
    for word in [
        *("include", "with", "show", "return", "fetch", "get", "want", "add"),
        *("enable", "enabled", "is", "has", "status", "flag"),
    ]
)
# A flag's words that leave out what the rest of its name is, and the prefixes of a
# word for what something is not (excludeInactive, hideUnverified, skipNonpublic).
_LEAVING_OUT = frozenset({"exclude", "hide", "skip", "omit"})
_NOT_PREFIXES = ("non", "in", "un")
_SHORTEST_STEM = 4  # "un" + "read", "in" + "line", "in" + "dex" are no negations
_NOT_ASKED = _NEGATION | {stem(word) for word in _LEAVING_OUT}
_ONLY = stem("only")


def flag(name: str, task: str) -> tuple[Any, str]:
    """True where the task says what the parameter's name is about ("include hidden
    files", "with hidden files" → include_hidden), False where a negation comes just
    before it."""
    parts = split_words(name)
    words = {stem(w) for w in parts if len(w) > 1 and not w.isdigit()}
    flagging = _FLAG_WORDS | ({_ONLY} if parts[:1] == ["only"] else set())  # not readOnly
    wanted = words - flagging or words
    said, _, _ = task_stems(task)
    if _leaves_out_the_opposite(parts, said):
        return True, "the task asks for the opposite of what it leaves out"
    places = [i for i, w in enumerate(said) if w in wanted]
    if not wanted or not wanted <= {said[i] for i in places}:
        return None, ""
    negated = _NEGATION & set(said[max(places[0] - 3, 0) : places[0]])
    return (False, "negated in the task") if negated else (True, "named in the task")


def _leaves_out_the_opposite(parts: list[str], said: tuple[str, ...]) -> bool:
    """Whether a flag whose name's words are `parts` and that leaves out what is not
    something (excludeInactive, hideUnverified) is asked for by that something ("the
    active projects"), where the task does not name what it leaves out."""
    rest = [part for part in parts if part not in _LEAVING_OUT]
    if len(rest) != 1 or len(rest) == len(parts):
        return False
    negated = rest[0]
    positive = next((negated[len(p) :] for p in _NOT_PREFIXES if negated.startswith(p)), "")
    if len(positive) <= _SHORTEST_STEM or stem(negated) in said:
        return False
    wanted = stem(positive)  # asked for, not after "not" or "exclude" ("don't show active …")
    return any(
        word == wanted and not _NOT_ASKED & set(said[max(i - 3, 0) : i])
        for i, word in enumerate(said)
    )

"""What a search is for: the words of a task that asks where something is or to find it
("where in the project do we handle user authentication" looks for "user
authentication"), for a parameter that takes a search's words (a `query`, `keywords`)
where the task quotes none and names no identifier."""

from __future__ import annotations

import re

from toolrun.selection.text import STOP_WORDS, words

# A parameter's own words for a search's words: "query", "keywords", "search_query".
SEARCH_WORDS = frozenset({"query", "keyword", "keywords", "search"})
# A task that looks for something ("find …", "where do we …", "look up …", "track
# down …", "which part of the code deals with …", "is there anything in the docs about
# …", "the code responsible for …").
_LOOKING = re.compile(
    r"\b(?:find|finding|search|searching|look|looking|locate|where|track\s+down|hunt"
    r"|(?:which|what)\s+(?:part|parts|file|files|module|modules|function|functions|class"
    r"|classes|code)|is\s+there\s+(?:any|anything|something)|responsible\s+for)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'\u2019-]*")
# Words that say where to look or that a task looks, not what for.
_NOT_SOUGHT = STOP_WORDS | words(
    """find finding search searching look looking locate where whatever track down hunt up
    code codebase base project repo repository source sources docs documentation file files
    place places part parts spot bit bits implemented implement implements handle handles
    handled handling deal deals dealt mention mentions mentioned defined define lives live
    happens happen we our i you can could would thing things stuff something anything
    everything somewhere anywhere everywhere across throughout inside through whole entire
    every each no idea called named is are was do does did im i'm we're it's where's
    what's hey hi hello help thanks thank have know don't pls which what responsible module
    modules function functions class classes there about"""
)
MOST_WORDS = 8


def searched_words(task: str) -> str | None:
    """The words `task` looks for (at most MOST_WORDS, as written), or None where it
    looks for nothing or says only where to look. Give it the task with its values
    (paths, URLs) blanked: they are other parameters'."""
    if not _LOOKING.search(task):
        return None
    found = (word.rstrip("'\u2019") for word in _WORD.findall(task))
    kept = [word for word in found if word.lower().replace("\u2019", "'") not in _NOT_SOUGHT]
    return " ".join(kept[:MOST_WORDS]) or None

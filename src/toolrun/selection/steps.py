"""Steps 1 and 2 of selection: what kind of work a task is (scenario), and what it wants
done (intents) — by rules on its words. Each is a replaceable function of the task's
text; the pipeline records their answers in its trace."""

from __future__ import annotations

import re

from toolrun.selection.facts import file_paths, urls
from toolrun.selection.text import split_words, stem, words

# Scenario → words that point to it (stems are compared) and the tool categories / tags
# that serve it.
SCENARIOS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "file operations": (
        words(
            "file files folder directory read write edit line lines text content "
            "save open rename copy path"
        ),
        frozenset({"filesystem", "files", "file"}),
    ),
    "code intelligence": (
        words(
            "function class symbol definition reference references method variable "
            "code source import hover"
        ),
        frozenset({"code", "search", "lsp", "code_intelligence"}),
    ),
    "version control": (
        words("git commit branch diff merge stash push pull repository repo blame checkout"),
        frozenset({"git", "version_control"}),
    ),
    "system operations": (
        words("run command shell execute process install build test script terminal pip npm make"),
        frozenset({"execution", "shell", "execute", "terminal"}),
    ),
    "network requests": (
        words("http https url fetch download web api request website page"),
        frozenset({"network", "http", "web"}),
    ),
    "data analysis": (
        words(
            "calculate compute average mean sum statistics analyze analysis data "
            "chart table count percentage ratio probability"
        ),
        frozenset({"data", "math", "analysis"}),
    ),
    "media processing": (
        words("image photo video audio picture resize convert sound music"),
        frozenset({"media", "image", "audio", "video"}),
    ),
    "delegation": (
        words("delegate subagent sub-agent agent assistant"),
        frozenset({"delegation", "agent"}),
    ),
}
_SCENARIO_STEMS = {
    scenario: frozenset(stem(word) for word in words) for scenario, (words, _) in SCENARIOS.items()
}

# Intent → the verbs that ask for it.
INTENTS: dict[str, frozenset[str]] = {
    "read": words("read show open view display print cat look see"),
    "write": words("write save store put record update set change modify edit"),
    "create": words("create make add new generate build register book schedule"),
    "delete": words("delete remove drop erase clear cancel uninstall"),
    "search": words("search find locate look grep query lookup where which list"),
    "retrieve": words("get retrieve fetch obtain download tell provide what"),
    "transform": words(
        "convert transform translate format rename replace sort merge split compress"
    ),
    "calculate": words(
        "calculate compute estimate solve count sum average predict "
        "measure determine analyze evaluate"
    ),
    "execute": words("run execute start launch install test deploy invoke call"),
    "send": words("send notify email message post share publish"),
}
_INTENT_STEMS = {intent: frozenset(stem(w) for w in words) for intent, words in INTENTS.items()}
_CLAUSE = re.compile(
    r"(?<=[.?!;])\s+|\s*\b(?:after that|and then|then|also|additionally|afterwards|"
    r"as well as|finally|next|besides)\b[,:]?\s*",
    re.IGNORECASE,
)


def scenarios(task: str) -> list[str]:
    """Step 1: the scenarios the task's words point to, strongest first (a file path
    counts for file operations, a URL for network requests)."""
    stems = {stem(word) for word in split_words(task)}
    hits = {name: len(stems & words) for name, words in _SCENARIO_STEMS.items()}
    hits["file operations"] += len(file_paths(task))
    hits["network requests"] += len(urls(task))
    return [name for name, count in sorted(hits.items(), key=lambda kv: -kv[1]) if count]


def scenario_tags(scenario: str) -> frozenset[str]:
    """The tool categories and tags that serve a scenario."""
    return SCENARIOS[scenario][1]


def intents(task: str) -> list[str]:
    """Step 2: what the task wants done, in the order its verbs come."""
    found: list[str] = []
    for word in split_words(task):
        for intent, stems in _INTENT_STEMS.items():
            if stem(word) in stems and intent not in found:
                found.append(intent)
    return found


def intent_stems(intent: str) -> frozenset[str]:
    return _INTENT_STEMS[intent]


def clauses(task: str) -> list[str]:
    """The parts of a task that ask for one thing each (sentences, "after that" …)."""
    parts = [part.strip(" ,.;:") for part in _CLAUSE.split(task)]
    return [part for part in parts if len(part.split()) >= 2] or [task]

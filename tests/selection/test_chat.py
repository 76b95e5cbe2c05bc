"""Tasks that ask for an answer in the chat (`toolrun.selection.chat`): they turn the
built-in tools down, never another registry's tool, a whitelisted one or a task that
names its workspace's files."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tests.selection.support import builtin_cards, weather_tool

from toolrun.selection import pipeline
from toolrun.selection.chat import CHAT_ONLY, asks_in_chat
from toolrun.selection.pipeline import Selector

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder


@pytest.fixture(scope="module")
def selector(encoder: Encoder) -> Selector:
    return Selector(builtin_cards(), encoder=encoder)


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ("give me a Dockerfile for a small Flask app, in the chat please", "in the chat"),
        ("write a regex for UK postcodes and paste it inline", "paste it inline"),
        ("suggest a docstring, I'll paste it in myself", "I'll paste it in myself"),
        ("Without touching the repo: what does `git cherry-pick` do?", "Without touching the repo"),
        ("tabs or spaces, which is better? your opinion", "your opinion"),
        ("what's a monad, conceptually", "conceptually"),
        ("suggest a commit message, just in your reply, for a rename", "just in your reply"),
        ("good rule of thumb for liveness probe timeouts, generally?", "good rule of thumb"),
        ("What does the acronym 'SOLID' stand for in OOP?", "What does the acronym stand for"),
        ("What does CORS stand for?", "What does CORS stand for"),
        ("what does `chmod 755` mean in terms of permissions?", "what does mean"),
        ("can you tell me what mean the word 'deprecated'?", "can you tell me what mean"),
        ("what are good practices for writing commit messages?", "what are good practices"),
        # a question of knowledge first, naming no path, file or URL
        ("explain the difference between a git tag and a git branch", "explain"),
        ("how do I squash my last three commits?", "how do I"),
        ("is SQLite good enough for a small web app?", "is SQLite good"),
        ("diff btw SIGTERM and SIGKILL", "diff btw"),
        ("what\u2019s the difference between > and >>?", "what's the difference"),
        ("what does `git rebase -i HEAD~3` do? just explain", "just explain"),  # code
    ],
)
def test_a_task_that_wants_its_answer_in_the_chat_says_so(task: str, said: str) -> None:
    assert asks_in_chat(task) == said


@pytest.mark.parametrize(
    "task",
    [
        "stage src/parser.py but don't commit yet",  # which git step not to take
        "never mind, don't push yet",
        "explain what src/toolrun/cli/main.py does",  # names a file: look at it
        "diff between `main` and `release/2.3`, only for src/api/",
        "how do I get https://example.com/status? fetch it",
        "why does the build fail on CI?",  # asks to look
        "write the explanation to docs/explain.md",  # "explain" not first
        # what it quotes is no part of it
        "commit with the message 'docs: add conceptual overview'",
        "write 'just tell me the truth' to quote.txt",
        # a phrase that names something else, or a task that names its workspace
        "fix the bug in the chat widget",
        "create docs/conceptual-overview.md with an intro",
        "open package.json and just tell me the version",
        "review src/auth.py and give me your opinion",
        "read the config and tell me the port, don't change anything",
        "hash the passwords so we never store them in plain text",
        "diff between main and develop",
        "diff between HEAD~3 and HEAD",
        "what's the difference between `main` and `develop`",
        "what's the difference between my branch and main",
        "explain how auth works in this codebase",
        "is the build good to go?",
        "should I commit these changes?",
        "what's the rule of thumb we use in docs/STYLE.md for headings?",  # names a file
        "save it just in your reply.txt file",  # a file's name, not the reply
        "Read CHANGELOG.md and quote the 2.0 entry in your answer.",
        "Run pytest -q and list the failing tests in your reply",  # not "just" in it
        "run the load test and tell me if we meet our rule of thumb of 200ms p95",
        "what does the deploy script do?",  # asks to read it
        "what does this error in build.log mean?",  # names a file
        "What does the config key log_level mean",  # not a quote, an acronym or a word
        "what does max_retries mean in our config?",
        "what are good practices for commit messages? check our git log for examples",
    ],
)
def test_a_task_for_the_workspace_does_not(task: str) -> None:
    assert asks_in_chat(task) is None


@pytest.mark.parametrize(
    ("task", "tool"),
    [
        ("give me a Dockerfile for a small Flask app, in the chat please", "read"),
        ("how do I squash my last three commits?", "git_log"),
        ("what would you name a branch for a login fix? your opinion", "git_branch_create"),
    ],
)
def test_it_turns_the_built_in_tools_down(
    selector: Selector, task: str, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    turned_down = selector.select(task)
    monkeypatch.setattr(pipeline, "asks_in_chat", lambda task: None)
    monkeypatch.setattr(pipeline, "unserved", lambda *args: None)
    without = selector.select(task)

    assert turned_down.chosen is None
    assert turned_down.reason.startswith(CHAT_ONLY)
    assert without.chosen == tool  # the judge alone would choose it


def test_a_whitelisted_tool_is_kept(selector: Selector) -> None:
    task = "how do I squash my last three commits?"

    assert selector.select(task, whitelist=["git_log"]).chosen == "git_log"


def test_another_registry_s_tool_is_kept(encoder: Encoder) -> None:
    weather = weather_tool()
    task = "the weather in Lisbon tomorrow, just tell me"
    assert asks_in_chat(task) == "just tell me"  # a built-in tool chosen would be turned down

    chosen = Selector([*builtin_cards(), weather], encoder=encoder).select(task)

    assert chosen.chosen == "weather_forecast"  # the plugin's is not

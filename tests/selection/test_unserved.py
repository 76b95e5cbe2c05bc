"""Requests no built-in tool serves (`toolrun.selection.unserved`): a task like one of
them is turned away from the built-in tools — not one that hands a built-in tool its
values, nor a whitelisted one, nor another registry's tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tests.selection.support import builtin_cards, weather_tool

from toolrun.selection import pipeline
from toolrun.selection import unserved as unserved_module
from toolrun.selection.pipeline import Selector
from toolrun.selection.quotes import quotes_prose
from toolrun.selection.requests import shipped_requests, unserved_requests
from toolrun.selection.unserved import MARGIN, unserved

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

# New phrasings (in no task file) of what the shipped requests no built-in tool serves ask.
NO_BUILT_IN_TOOL = [
    "Explain in general terms how git cherry-pick differs from git revert; no need to look"
    " at the repo.",
    "In plain words, what is a detached HEAD in git?",
    "Write a short poem about a failing build.",
    'Translate "the deploy is done, thanks everyone" into Spanish.',
]
BUILT_IN_TOOL = [
    ("show me the diff of the staged changes", "git_diff"),
    ("read src/toolrun/api/app.py", "read"),
    ("find every TODO comment under src/", "grep"),
    ("commit the staged changes with the message 'fix typo'", "git_commit"),
    # The value a built-in tool is handed reads like a request none serves:
    ("commit with the message 'write a haiku about autumn'", "git_commit"),
    ("fetch https://api.weather.gov/gridpoints/TOP/31,80/forecast", "http_fetch"),
    ("git status in 'frontend'", "git_status"),
    # … or is prose it hands over, which is weighed without it:
    ("write 'what is the capital of Australia?' to quiz.txt", "write"),
    ("search the docs for 'how do I bake sourdough bread'", "search"),
]


@pytest.fixture(scope="module")
def selector(encoder: Encoder) -> Selector:
    return Selector(builtin_cards(), encoder=encoder)


@pytest.mark.parametrize("task", NO_BUILT_IN_TOOL)
def test_a_task_like_a_request_no_built_in_tool_serves_chooses_none(
    selector: Selector, task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "asks_in_chat", lambda task: None)  # that rule aside
    turned_down = selector.select(task)
    monkeypatch.setattr(unserved_module, "unserved_requests", lambda: ())
    without = selector.select(task)

    assert turned_down.chosen is None
    assert "like a request no built-in tool serves" in turned_down.reason
    assert turned_down.trace["4_evaluation"] == turned_down.reason
    assert without.chosen is not None  # the judge alone would choose a built-in tool


@pytest.mark.parametrize(("task", "tool"), BUILT_IN_TOOL)
def test_a_task_a_built_in_tool_does_keeps_it(selector: Selector, task: str, tool: str) -> None:
    assert selector.select(task).chosen == tool


@pytest.mark.parametrize(
    "task",
    [
        "write 'what is the capital of Australia?' to quiz.txt",
        "search the docs for 'how do I bake sourdough bread'",
    ],
)
def test_prose_a_task_hands_over_is_no_request_of_its_own(
    selector: Selector, task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = selector.select(task)
    monkeypatch.setattr(pipeline, "quotes_prose", lambda task: False)
    weighed_whole = selector.select(task)

    assert kept.chosen is not None
    assert weighed_whole.chosen is None  # its quote alone is like a request none serves
    assert "like a request no built-in tool serves" in weighed_whole.reason


@pytest.mark.parametrize(
    ("task", "prose"),
    [
        ("commit with the message 'book a table for two'", True),
        ('save "Hello, how are you?" to greeting.txt', True),
        ("what does `git rebase -i HEAD~3` do?", False),  # code it asks about
        ("what does 'idempotent' mean?", False),  # a term
        ("switch to 'feature/login'", False),
        ("it's the users' files", False),  # apostrophes
    ],
)
def test_prose_is_three_words_or_more_in_quote_marks(task: str, prose: bool) -> None:
    assert quotes_prose(task) is prose


def test_a_whitelisted_tool_is_not_turned_down(selector: Selector) -> None:
    task = "In plain words, what is a detached HEAD in git?"

    listed = selector.select(task, whitelist=["git_status"])

    assert selector.select(task).chosen is None  # turned down when not listed
    assert listed.chosen == "git_status"  # the operator's list outweighs a likeness
    assert "whitelisted" in listed.reason


def test_another_registry_s_tool_is_never_turned_down(encoder: Encoder) -> None:
    weather = weather_tool()
    task = "What's the weather going to be like in Lisbon tomorrow?"
    assert task in unserved_requests()  # no built-in tool serves it …

    chosen = Selector([*builtin_cards(), weather], encoder=encoder).select(task)

    assert chosen.chosen == "weather_forecast"  # … but this one does


def test_the_nearest_request_decides_within_the_margin(encoder: Encoder) -> None:
    requests = ["Explain what git rebase does", "What is the capital of Peru?"]
    task_vector = encoder.encode(["Explain in plain words what git rebase does"])[0]
    near = float(encoder.encode(requests[:1])[0] @ task_vector)

    found = unserved(encoder, task_vector, near + MARGIN - 0.01, requests)

    assert found is not None
    assert found.request == requests[0]
    assert found.similarity == pytest.approx(near, abs=1e-4)
    assert unserved(encoder, task_vector, near + MARGIN + 0.01, requests) is None
    assert unserved(encoder, task_vector, 0.0, []) is None


def test_the_shipped_requests_no_built_in_tool_serves_are_no_tool_s() -> None:
    made_of_tools = {request for requests in shipped_requests().values() for request in requests}

    assert len(unserved_requests()) >= 100
    assert not made_of_tools & set(unserved_requests())

"""Requests no built-in tool could do (`toolrun.selection.needless`): a task like one of
them is turned away from the built-in tools, never from another registry's tools, and
the requests are shipped embedded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from toolrun.selection import needless as needless_module
from toolrun.selection.cards import ToolCard
from toolrun.selection.needless import MARGIN, needless
from toolrun.selection.pipeline import Selector
from toolrun.selection.requests import needless_requests, shipped_requests
from toolrun.tools import ToolRegistry

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

# New phrasings (in no task file) of what the shipped requests needing no tool ask.
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
]


def builtin_cards() -> list[ToolCard]:
    return [ToolCard.of(tool.descriptor) for tool in ToolRegistry.with_builtins().list()]


@pytest.fixture(scope="module")
def selector(encoder: Encoder) -> Selector:
    return Selector(builtin_cards(), encoder=encoder)


@pytest.mark.parametrize("task", NO_BUILT_IN_TOOL)
def test_a_task_like_a_request_no_built_in_tool_could_do_chooses_none(
    selector: Selector, task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    turned_down = selector.select(task)
    monkeypatch.setattr(needless_module, "needless_requests", lambda: ())
    without = selector.select(task)

    assert turned_down.chosen is None
    assert "like a request no built-in tool could do" in turned_down.reason
    assert turned_down.trace["4_evaluation"] == turned_down.reason
    assert without.chosen is not None  # the judge alone would choose a built-in tool


@pytest.mark.parametrize(("task", "tool"), BUILT_IN_TOOL)
def test_a_task_a_built_in_tool_does_keeps_it(selector: Selector, task: str, tool: str) -> None:
    assert selector.select(task).chosen == tool


def test_another_registry_s_tool_is_never_turned_down(encoder: Encoder) -> None:
    weather = ToolCard.parse(
        {
            "name": "weather_forecast",
            "description": "The weather forecast for a city: temperature, rain and wind by day",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    )
    task = "What's the weather going to be like in Lisbon tomorrow?"
    assert task in needless_requests()  # no built-in tool could do it …

    chosen = Selector([*builtin_cards(), weather], encoder=encoder).select(task)

    assert chosen.chosen == "weather_forecast"  # … but this one can


def test_the_margin_decides(encoder: Encoder) -> None:
    tools = [encoder.encode(["git_diff: Show changes between commits"])]
    request = "Explain what git rebase does"
    task = "Explain in plain words what git rebase does"
    near = float(encoder.encode([request])[0] @ encoder.encode([task])[0])
    best = float((tools[0] @ encoder.encode([task])[0]).max())

    found = needless(encoder, task, tools, [request])

    assert (found is not None) == (near >= best - MARGIN)
    assert found is not None, "the task is far nearer the request than the tool"
    assert found.request == request
    assert needless(encoder, task, tools, []) is None
    assert needless(encoder, task, [], [request]) is None


def test_the_requests_needing_no_tool_are_no_tool_s_requests() -> None:
    made_of_tools = {request for requests in shipped_requests().values() for request in requests}

    assert len(needless_requests()) >= 100
    assert not made_of_tools & set(needless_requests())

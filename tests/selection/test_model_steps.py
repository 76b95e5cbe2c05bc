"""Steps 2 and 5 by an OpenAI-compatible model (a scripted one here), and the fall back
to the rules when the model fails."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.scripted_model import ScriptedModel, answer, tool_calls

from toolrun.selection.cards import ToolCard
from toolrun.selection.model_steps import ModelSteps
from toolrun.selection.pipeline import Selector
from toolrun.subagents.chat import ChatModel

HOTEL = ToolCard.parse(
    {
        "name": "hotel.book",
        "description": "Book a hotel room in a city for some nights",
        "parameters": {
            "type": "dict",
            "properties": {"city": {"type": "str"}, "nights": {"type": "int"}},
            "required": ["city", "nights"],
        },
    }
)
TASK = "Book me a room in the capital of Portugal for three nights"


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as server:
        yield server


@pytest.fixture
def steps(model: ScriptedModel) -> Iterator[ModelSteps]:
    chat = ChatModel(model.url, "scripted")
    yield ModelSteps(chat, timeout_s=10)
    chat.close()


def test_the_model_fills_what_rules_cannot_and_is_made_to_call_the_tool(
    model: ScriptedModel, steps: ModelSteps
) -> None:
    model.script(
        answer('Sure: {"intents": ["create", "nonsense"]}'),
        tool_calls(("hotel_book", {"city": "Lisbon", "nights": 3})),
    )

    selection = Selector([HOTEL]).select(TASK, model=steps)

    assert selection.trace["2_intents"] == ["create"]
    assert selection.trace["2_intents_by"] == "model"
    assert selection.arguments == {"city": "Lisbon", "nights": 3}
    assert selection.trace["5_arguments_by"] == "model"
    assert selection.trace["5_arguments"] == {"city": "model", "nights": "model"}
    forced = model.requests[1]
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "hotel_book"}}
    assert forced["tools"][0]["function"]["parameters"]["type"] == "object"


def test_the_context_wins_over_the_model_and_its_values_are_checked(
    model: ScriptedModel, steps: ModelSteps
) -> None:
    model.script(
        answer('{"intents": ["create"]}'),
        tool_calls(("hotel_book", {"city": "Lisbon", "nights": "three"})),
    )

    selection = Selector([HOTEL]).select(TASK, model=steps, context={"city": "Porto"})

    assert selection.arguments == {"city": "Porto", "nights": "three"}
    assert selection.trace["5_arguments"]["city"] == "context"
    assert selection.errors
    assert "nights" in selection.errors[0]


def test_a_failing_model_leaves_the_steps_to_the_rules(
    model: ScriptedModel, steps: ModelSteps
) -> None:
    model.script((500, '{"error": "down"}'), answer("I would rather not call anything."))

    selection = Selector([HOTEL]).select("Book a hotel room in Porto for 3 nights", model=steps)

    assert selection.trace["2_intents_by"].startswith("rules (the model failed: ")
    assert "answered 500" in selection.trace["2_intents_by"]
    assert selection.trace["5_arguments_by"] == (
        "rules (the model failed: the model did not call hotel_book with JSON arguments)"
    )
    assert selection.arguments == {"city": "Porto", "nights": 3}

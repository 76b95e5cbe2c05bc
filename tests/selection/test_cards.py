"""Tools to select among: from the registry, or supplied in the OpenAI, BFCL or
Seal-Tools formats."""

from __future__ import annotations

from typing import Any

import pytest

from toolrun.selection.cards import CardError, ToolCard
from toolrun.tools import ToolRegistry

FUNCTION = {
    "name": "weather.get",
    "description": "Current weather of a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "str", "description": "City name."},
            "days": {"type": "integer"},
            "point": {"type": "tuple", "items": {"type": "float"}},
        },
        "required": ["city"],
    },
}


def test_bfcl_python_type_names_become_json_schema_ones() -> None:
    card = ToolCard.parse(FUNCTION)

    assert card.parameters["type"] == "object"
    assert card.properties["city"]["type"] == "string"
    assert card.properties["point"] == {"type": "array", "items": {"type": "number"}}
    assert card.required == ["city"]


def test_the_openai_wrapping_is_unwrapped() -> None:
    assert ToolCard.parse({"type": "function", "function": FUNCTION}).name == "weather.get"


def test_seal_tools_records_are_read() -> None:
    record = {
        "api_name": "getWaterQuality",
        "api_description": "Water quality of a place",
        "field": "Environment",
        "parameters": {"type": {"type": "str", "description": "kind"}},
        "required": ["type"],
    }

    card = ToolCard.parse(record)

    assert (card.name, card.category) == ("getWaterQuality", "Environment")
    assert card.properties == {"type": {"type": "string", "description": "kind"}}
    assert card.required == ["type"]


def test_registry_descriptors_keep_tags_category_and_examples() -> None:
    tool = ToolRegistry.with_builtins().get("grep")
    assert tool is not None

    card = ToolCard.of(tool.descriptor)

    assert "search" in card.tags
    assert card.examples


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must be a JSON object"),
        ({"description": "x"}, "needs a non-empty name"),
        ({"name": "a", "parameters": []}, "parameters must be an object"),
    ],
)
def test_what_is_not_a_tool_is_refused(data: Any, message: str) -> None:
    with pytest.raises(CardError, match=message):
        ToolCard.parse(data)


def test_parameters_of_another_type_are_refused() -> None:
    with pytest.raises(CardError, match="schema of type object"):
        ToolCard.parse({"name": "a", "parameters": {"type": "string"}})

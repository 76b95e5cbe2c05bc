"""Step 5: argument values from a task's words and a context, checked by the schema."""

from __future__ import annotations

from typing import Any

from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard


def card(properties: dict[str, Any], required: list[str] | None = None) -> ToolCard:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return ToolCard.parse({"name": "t", "description": "d", "parameters": schema})


def test_numbers_go_to_the_parameters_named_just_before_them() -> None:
    triangle = card({"base": {"type": "number"}, "height": {"type": "number"}}, ["base", "height"])

    filled = fill(triangle, "Area of a triangle with height 5 meters and base 10.5 meters")

    assert filled.arguments == {"base": 10.5, "height": 5}
    assert filled.valid


def test_numbers_without_names_go_in_order_and_integers_stay_integers() -> None:
    sides = card({f"side{i}": {"type": "integer"} for i in (1, 2, 3)})

    assert fill(sides, "sides are 5 units, 4 units and 3 units").arguments == {
        "side1": 5,
        "side2": 4,
        "side3": 3,
    }


def test_quoted_strings_paths_urls_dates_and_enums() -> None:
    tool = card(
        {
            "url": {"type": "string"},
            "file_path": {"type": "string"},
            "date": {"type": "string"},
            "mode": {"enum": ["fast", "thorough"]},
            "message": {"type": "string"},
        }
    )
    task = (
        "Fetch https://example.com/a?b=1 into docs/out.md on May 10th, 2020 with the "
        'thorough mode and the note "keep it short"'
    )

    filled = fill(tool, task)

    assert filled.arguments == {
        "url": "https://example.com/a?b=1",
        "file_path": "docs/out.md",
        "date": "2020-05-10",
        "mode": "thorough",
        "message": "keep it short",
    }
    assert filled.sources["date"] == "date in the task"


def test_the_context_wins_and_missing_required_parameters_are_named() -> None:
    tool = card({"city": {"type": "string"}, "days": {"type": "integer"}}, ["city", "days"])

    filled = fill(tool, "the weather please", {"city": "Oslo"})

    assert filled.arguments == {"city": "Oslo"}
    assert filled.sources == {"city": "context"}
    assert filled.missing == ["days"]
    assert not filled.valid


def test_a_value_the_schema_refuses_is_reported() -> None:
    tool = card({"count": {"type": "integer", "maximum": 3}}, ["count"])

    filled = fill(tool, "count 7 of them")

    assert filled.errors
    assert "count" in filled.errors[0]

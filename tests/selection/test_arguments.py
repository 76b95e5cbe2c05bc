"""Step 5: argument values from a task's words and a context, checked by the schema."""

from __future__ import annotations

from typing import Any

from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import without_values


def card(properties: dict[str, Any], required: list[str] | None = None) -> ToolCard:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return ToolCard.parse({"name": "t", "description": "d", "parameters": schema})


def test_numbers_go_to_the_parameters_named_just_before_them() -> None:
    triangle = card({"base": {"type": "number"}, "height": {"type": "number"}}, ["base", "height"])

    filled = fill(triangle, "Area of a triangle with height 5 meters and base 10.5 meters")

    assert filled.arguments == {"base": 10.5, "height": 5}
    assert filled.valid


def test_numbers_without_names_go_in_order_and_integers_stay_integers() -> None:
    sides = card({f"side{i}": {"type": "integer"} for i in (1, 2, 3)}, ["side1", "side2", "side3"])

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


def test_a_question_mark_ending_a_word_asks_and_is_no_glob() -> None:
    tool = card({"pattern": {"type": "string"}})
    league = card({"team": {"type": "string"}})

    assert fill(tool, "Which files match src/*.py?").arguments == {"pattern": "src/*.py"}
    assert fill(tool, "List file?.txt").arguments == {"pattern": "file?.txt"}
    assert fill(league, "Who leads the Premier League?").arguments == {"team": "Premier League"}
    assert "defined" in without_values("where is the function parse_args defined?")


def test_numbers_are_named_by_the_words_after_them_too() -> None:
    sound = card(
        {
            "frequency": {"type": "integer", "description": "Frequency in Hz."},
            "duration": {"type": "integer", "description": "Length in seconds."},
            "rounding": {"type": "integer"},
        },
        ["frequency", "duration"],
    )

    filled = fill(sound, "Play 5 seconds of a 440Hz tone")

    assert filled.arguments == {"frequency": 440, "duration": 5}  # rounding: never named


def test_scales_and_percentages() -> None:
    money = card(
        {
            "revenue": {"type": "integer"},
            "budget": {"type": "integer"},
            "rate": {"type": "number", "description": "The rate, as a decimal."},
            "share": {"type": "number", "description": "The share in percent."},
        }
    )

    filled = fill(money, "revenue of $1.2M, a budget of 50 million, rate 5% and share 7%")

    assert filled.arguments == {"revenue": 1200000, "budget": 50000000, "rate": 0.05, "share": 7}


def test_literal_lists_go_to_arrays_and_numbers_are_not_given_twice() -> None:
    vectors = card(
        {
            "a": {"type": "array", "items": {"type": "integer"}},
            "b": {"type": "array", "items": {"type": "integer"}},
            "names": {"type": "array", "items": {"type": "string"}},
        }
    )

    filled = fill(vectors, "Compare [3, 2, 1] with (1, 2) for ['Sam', 'Alice']")
    loose = fill(vectors, "Compare 3, 2 and 1")

    assert filled.arguments == {"a": [3, 2, 1], "b": [1, 2], "names": ["Sam", "Alice"]}
    assert loose.arguments == {"a": [3, 2, 1]}


def test_booleans_named_in_the_task_and_their_negation() -> None:
    tool = card(
        {
            "pattern": {"type": "string"},
            "include_hidden": {"type": "boolean"},
            "replace_all": {"type": "boolean"},
        }
    )

    assert fill(tool, "list *.md, include hidden files").arguments["include_hidden"] is True
    assert fill(tool, "list *.md but don't include hidden ones").arguments == {
        "pattern": "*.md",
        "include_hidden": False,
    }
    assert "replace_all" not in fill(tool, "replace it in *.md").arguments


def test_enum_values_by_their_stem_and_identifiers_as_strings() -> None:
    lsp = card(
        {
            "operation": {"enum": ["definition", "references"]},
            "file_path": {"type": "string"},  # takes no identifier
            "symbol": {"type": "string"},
        },
        ["operation"],
    )

    filled = fill(lsp, "where is the function parse_args defined?")

    assert filled.arguments == {"operation": "definition", "symbol": "parse_args"}
    assert filled.sources["operation"] == "enum value in the task (by its stem)"
    assert filled.sources["symbol"] == "identifier in the task"


def test_what_to_replace_with_what_and_a_range_of_lines() -> None:
    edit = card({"old_string": {"type": "string"}, "new_string": {"type": "string"}})
    read = card({"offset": {"type": "integer"}, "limit": {"type": "integer"}})

    assert fill(edit, "replace foo with 'bar baz'").arguments == {
        "old_string": "foo",
        "new_string": "bar baz",
    }
    assert fill(read, "lines 10 to 20").arguments == {"offset": 10, "limit": 11}
    assert fill(read, "the first 20 lines").arguments == {"limit": 20}


def test_a_required_parameter_left_open_takes_its_default() -> None:
    tool = card(
        {
            "city": {"type": "string"},
            "unit": {"type": "string", "default": "celsius"},
            "days": {"type": "integer", "default": 3},
        },
        ["city", "unit"],
    )

    filled = fill(tool, 'weather in "Oslo"')

    assert filled.arguments == {"city": "Oslo", "unit": "celsius"}  # days: optional
    assert filled.sources["unit"] == "default"
    assert filled.valid

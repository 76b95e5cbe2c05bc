"""Argument validation messages an agent can act on, and schema defaults."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from toolrun.errors import InvalidArguments, ToolrunError
from toolrun.tools.validation import (
    argument_errors,
    validate_arguments,
    validator_for,
    with_defaults,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "default": 2000},
        "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
        "ratio": {"type": "number", "exclusiveMaximum": 1},
        "level": {"enum": [1, 2, None]},
        "timeout": {"type": ["number", "null"], "maximum": 60},
        "options": {
            "type": "object",
            "properties": {"depth": {"type": "integer", "default": 3}},
            "required": ["depth"],
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["file_path"],
    "additionalProperties": False,
}
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _errors(**arguments: Any) -> str:
    return argument_errors(VALIDATOR, arguments)


def test_valid_arguments_have_no_errors() -> None:
    assert _errors(file_path="a.txt", limit=5, mode="fast", tags=["x"]) == ""
    validate_arguments(VALIDATOR, {"file_path": "a.txt"})


def test_missing_required_parameter() -> None:
    assert _errors() == "missing required parameter: file_path"


def test_wrong_type() -> None:
    assert _errors(file_path="a.txt", limit="ten") == (
        "parameter 'limit' must be integer, got \"ten\""
    )


def test_boolean_is_not_an_integer() -> None:
    assert _errors(file_path="a.txt", limit=True) == (
        "parameter 'limit' must be integer, got boolean true"
    )


def test_wrong_type_with_a_type_list() -> None:
    assert _errors(file_path="a.txt", timeout="soon") == (
        "parameter 'timeout' must be number or null, got \"soon\""
    )


def test_unknown_parameter() -> None:
    assert _errors(file_path="a.txt", colour="red") == "unknown parameter: colour"


def test_unknown_parameters_are_listed_sorted() -> None:
    assert _errors(file_path="a.txt", zeta=1, alpha=2) == "unknown parameters: alpha, zeta"


def test_enum() -> None:
    message = _errors(file_path="a.txt", mode="turbo")

    assert message.startswith('parameter \'mode\' must be one of "fast", "safe"')
    assert message.endswith('got "turbo"')


def test_enum_of_non_strings() -> None:
    message = _errors(file_path="a.txt", level=3)

    assert message.startswith("parameter 'level' must be one of 1, 2, null")
    assert message.endswith("got integer 3")


def test_minimum() -> None:
    assert _errors(file_path="a.txt", limit=0) == "parameter 'limit' must be >= 1, got integer 0"


def test_maximum_and_exclusive_bounds() -> None:
    assert _errors(file_path="a.txt", timeout=61) == (
        "parameter 'timeout' must be <= 60, got integer 61"
    )
    assert _errors(file_path="a.txt", ratio=1.5) == (
        "parameter 'ratio' must be < 1, got number 1.5"
    )


def test_empty_string() -> None:
    assert _errors(file_path="") == "parameter 'file_path' must not be empty"


def test_nested_paths_are_named() -> None:
    assert _errors(file_path="a", options={}) == "missing required parameter: options.depth"
    assert _errors(file_path="a", options={"depth": "deep"}) == (
        "parameter 'options.depth' must be integer, got \"deep\""
    )
    assert _errors(file_path="a", tags=["ok", 7]) == (
        "parameter 'tags[1]' must be string, got integer 7"
    )


def test_long_values_are_cut() -> None:
    message = _errors(file_path="a.txt", limit="x" * 100)

    assert message == "parameter 'limit' must be integer, got \"" + "x" * 56 + "..."


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ([1, 2], "arguments must be an object, got array [1, 2]"),
        ("text", 'arguments must be an object, got "text"'),
        (None, "arguments must be an object, got null null"),
    ],
)
def test_arguments_must_be_an_object(arguments: object, expected: str) -> None:
    assert argument_errors(VALIDATOR, arguments) == expected


def test_several_problems_are_joined_in_one_line() -> None:
    message = _errors(limit="ten", colour="red", mode="turbo")

    assert "\n" not in message
    parts = message.split("; ")
    assert "missing required parameter: file_path" in parts
    assert "unknown parameter: colour" in parts
    assert "parameter 'limit' must be integer, got \"ten\"" in parts
    assert any(part.startswith("parameter 'mode' must be one of") for part in parts)


def test_several_missing_parameters_are_each_named() -> None:
    validator = jsonschema.Draft202012Validator(
        {"type": "object", "properties": {}, "required": ["a", "b"]}
    )

    assert argument_errors(validator, {}) == (
        "missing required parameter: a; missing required parameter: b"
    )


def test_validate_arguments_raises_invalid_arguments() -> None:
    with pytest.raises(InvalidArguments) as info:
        validate_arguments(VALIDATOR, {"limit": "ten"})

    assert isinstance(info.value, ToolrunError)
    assert str(info.value) == (
        "missing required parameter: file_path; parameter 'limit' must be integer, got \"ten\""
    )


def test_with_defaults_fills_missing_top_level_parameters() -> None:
    arguments = {"file_path": "a.txt", "mode": "fast"}

    filled = with_defaults(SCHEMA, arguments)

    assert filled == {"file_path": "a.txt", "mode": "fast", "limit": 2000}
    assert arguments == {"file_path": "a.txt", "mode": "fast"}


def test_with_defaults_keeps_given_values_and_ignores_nested_defaults() -> None:
    filled = with_defaults(SCHEMA, {"file_path": "a", "limit": 5, "options": {}})

    assert filled == {"file_path": "a", "limit": 5, "mode": "safe", "options": {}}


def test_with_defaults_without_properties_copies() -> None:
    arguments = {"x": 1}

    filled = with_defaults({"type": "object"}, arguments)

    assert filled == arguments
    assert filled is not arguments


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"file_path": "a", "limit": float("nan")}, "limit"),
        ({"file_path": "a", "limit": float("inf")}, "limit"),
        ({"file_path": "a", "nested": {"deep": [1.0, float("-inf")]}}, "nested.deep[1]"),
    ],
)
def test_non_finite_numbers_are_refused_first(arguments: dict[str, Any], where: str) -> None:
    validator = validator_for({"type": "object"})

    assert argument_errors(validator, arguments) == f"parameter '{where}' must be a finite number"

"""OpenAI strict mode: parameters rewritten the documented way (every object closed and
fully required, optional properties nullable, only supported keywords), `strict: true`
only where that keeps the schema's meaning, and the model's nulls undone."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from toolrun.interop.formats import ExportFormat, export
from toolrun.interop.strict import strict_parameters, without_nulls
from toolrun.tools import ToolRegistry

BUILTINS = [tool.descriptor for tool in ToolRegistry.with_builtins().list()]
# The keywords OpenAI's Structured Outputs guide lists as supported, kept apart from the
# module's own list so that the test checks it.
STRUCTURE = {"type", "description", "title", "properties", "required", "additionalProperties"}
COMPOSITION = {"items", "enum", "const", "anyOf", "$ref", "$defs"}
STRINGS = {"pattern", "format"}
NUMBERS = {"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
ARRAYS = {"minItems", "maxItems"}
SUPPORTED = STRUCTURE | COMPOSITION | STRINGS | NUMBERS | ARRAYS
NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "tags": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "note": {"type": "string"}},
                "required": ["key"],
            },
        },
        "when": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def strict_violations(schema: Any, where: str = "parameters") -> list[str]:
    """What OpenAI's strict mode would refuse in `schema`."""
    if not isinstance(schema, dict):
        return []
    found = [f"{where}: {key}" for key in set(schema) - SUPPORTED]
    if "properties" in schema:
        if schema.get("additionalProperties") is not False:
            found.append(f"{where}: additionalProperties is not false")
        if sorted(schema.get("required", [])) != sorted(schema["properties"]):
            found.append(f"{where}: not every property is required")
        for name, part in schema["properties"].items():
            found += strict_violations(part, f"{where}.{name}")
    found += strict_violations(schema.get("items"), f"{where}[]")
    for index, option in enumerate(schema.get("anyOf", [])):
        found += strict_violations(option, f"{where}|{index}")
    return found


def test_the_strict_export_qualifies_wherever_it_says_strict() -> None:
    exported = export(BUILTINS, ExportFormat.OPENAI, strict=True)
    plain = export(BUILTINS, ExportFormat.OPENAI)

    strict = [tool["function"] for tool in exported if tool["function"].get("strict")]
    assert len(strict) >= len(BUILTINS) - 2  # nearly every built-in can be strict
    for function in strict:
        assert strict_violations(function["parameters"]) == [], function["name"]
    assert all("strict" not in tool["function"] for tool in plain)


def test_optional_properties_become_nullable_and_keep_their_meaning() -> None:
    made = strict_parameters(NESTED)

    assert made is not None
    assert strict_violations(made) == []
    properties = made["properties"]
    assert properties["name"] == {"type": "string"}
    assert properties["mode"]["type"] == ["null", "string"]
    assert properties["mode"]["enum"] == ["a", "b", None]
    assert properties["mode"]["description"] == 'Default: "a".'
    assert properties["when"] == {
        "anyOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"type": "null"}]
    }
    item = properties["tags"]["items"]
    assert item["properties"]["note"]["type"] == ["null", "string"]
    model_sent = {"name": "x", "mode": None, "tags": [{"key": "k", "note": None}], "when": None}
    assert without_nulls(model_sent, NESTED) == {"name": "x", "tags": [{"key": "k"}]}
    jsonschema.validate(without_nulls(model_sent, NESTED), NESTED)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "additionalProperties": {"type": "string"}},  # an open map
        {"type": "object"},  # any object
        {"type": "object", "properties": {"x": {}}},  # any value
        {"type": "object", "properties": {"x": {"allOf": [{"type": "string"}]}}},
        {"type": "object", "properties": {"x": {"not": {"type": "string"}}}},
        {"anyOf": [{"type": "object"}]},  # the root must be an object
    ],
)
def test_what_strict_mode_cannot_express_is_exported_without_strict(
    schema: dict[str, Any],
) -> None:
    assert strict_parameters(schema) is None


def test_nulls_a_schema_takes_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "string"}},
        "required": ["b"],
    }

    assert without_nulls({"a": None, "b": None}, schema) == {"a": None, "b": None}


def test_strict_is_for_openai_only() -> None:
    with pytest.raises(ValueError, match="strict applies to the openai format only"):
        export(BUILTINS, ExportFormat.ANTHROPIC, strict=True)

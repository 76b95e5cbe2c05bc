"""ToolDescriptor validation, the JSON forms of descriptors, calls and results."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import BUILTINS

from toolrun.errors import InvalidDescriptor
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import (
    Risk,
    ToolCall,
    ToolDescriptor,
    ToolExample,
    ToolRegistry,
    ToolResult,
    ToolStatus,
)
from toolrun.tools.builtin.read import DESCRIPTOR as READ_DESCRIPTOR
from toolrun.tools.semver import Version

DESCRIPTOR_KEYS = {
    "name",
    "version",
    "description",
    "parameters",
    "returns",
    "examples",
    "notes",
    "permission",
    "risk",
    "tags",
    "category",
    "time_limit_s",
    "requires_confirmation",
    "repeat_safe",
    "imported_from",
}


def _fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": "count",
        "version": "1.0.0",
        "description": "Count to n.",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
            "additionalProperties": False,
        },
        "returns": {"type": "object", "properties": {"total": {"type": "integer"}}},
        "examples": [
            {"description": "zero", "arguments": {"n": 0}},
            {"description": "one", "arguments": {"n": 1}},
            {"description": "many", "arguments": {"n": 99}},
        ],
        "permission": "read_only",
    }
    fields.update(overrides)
    return fields


def _error(**overrides: Any) -> str:
    with pytest.raises(ValidationError) as info:
        ToolDescriptor(**_fields(**overrides))
    return str(info.value)


def test_valid_descriptor_has_documented_defaults() -> None:
    descriptor = ToolDescriptor(**_fields())

    assert descriptor.tool_id == "count@1.0.0"
    assert descriptor.semver == Version(1, 0, 0)
    assert descriptor.permission is PermissionLevel.READ_ONLY
    assert descriptor.risk is Risk.LOW
    assert descriptor.category == "general"
    assert descriptor.time_limit_s == 10.0
    assert descriptor.requires_confirmation is False
    assert descriptor.notes == []
    assert descriptor.tags == []
    assert descriptor.examples[0] == ToolExample(description="zero", arguments={"n": 0})


def test_parameters_that_are_not_a_json_schema_are_rejected() -> None:
    message = _error(
        parameters={"type": "object", "properties": {"x": {"type": "nope"}}},
        examples=[{"description": str(i), "arguments": {}} for i in range(3)],
    )

    assert "not a valid JSON Schema (Draft 2020-12) at properties/x/type" in message
    assert "'nope'" in message


def test_returns_that_are_not_a_json_schema_are_rejected() -> None:
    message = _error(returns={"type": "object", "required": "total"})

    assert "not a valid JSON Schema (Draft 2020-12) at required" in message


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "array", "items": {"type": "integer"}},
        {"type": "string"},
        {"properties": {"n": {"type": "integer"}}},
        {"type": ["object", "null"]},
    ],
)
def test_parameters_must_be_an_object_schema(parameters: dict[str, Any]) -> None:
    message = _error(parameters=parameters)

    assert 'parameters must be a JSON Schema with "type": "object"' in message


@pytest.mark.parametrize("count", [0, 1, 2])
def test_fewer_than_three_examples_are_rejected(count: int) -> None:
    examples = [{"description": f"n={i}", "arguments": {"n": i}} for i in range(count)]

    message = _error(examples=examples)

    assert f"at least 3 examples are required, got {count}" in message


def test_an_example_that_fails_the_schema_is_named() -> None:
    examples = [
        {"description": "zero", "arguments": {"n": 0}},
        {"description": "negative", "arguments": {"n": -1}},
        {"description": "one", "arguments": {"n": 1}},
    ]

    message = _error(examples=examples)

    assert "example 2 ('negative') is invalid: parameter 'n' must be >= 0, got integer -1" in (
        message
    )


def test_an_example_with_an_unknown_or_missing_parameter_is_named() -> None:
    examples = [
        {"description": "zero", "arguments": {"n": 0}},
        {"description": "one", "arguments": {"n": 1}},
        {"description": "typo", "arguments": {"m": 1}},
    ]

    message = _error(examples=examples)

    assert "example 3 ('typo') is invalid:" in message
    assert "missing required parameter: n" in message
    assert "unknown parameter: m" in message


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Read",
        "1read",
        "_read",
        "read-file",
        "read file",
        "read.2",
        "a.b.c",
        ".read",
        "read.",
        "lire_é",
        "a" * 65,
        "ns." + "a" * 62,
    ],
)
def test_bad_names_are_rejected(name: str) -> None:
    message = _error(name=name)

    assert f"tool name {name!r} must be lowercase letters, digits and '_'" in message


def test_a_namespaced_name_is_accepted() -> None:
    descriptor = ToolDescriptor(**_fields(name="weather.forecast_v2"))

    assert descriptor.tool_id == "weather.forecast_v2@1.0.0"


def test_a_name_with_a_trailing_newline_is_rejected() -> None:
    # `$` also matches before a final newline, so re.match lets "read\n" through.
    message = _error(name="read\n")

    assert "tool name 'read\\n' must be lowercase letters" in message


@pytest.mark.parametrize("name", ["a", "read", "read_file2", "a" * 64])
def test_good_names_are_accepted(name: str) -> None:
    assert ToolDescriptor(**_fields(name=name)).name == name


@pytest.mark.parametrize(
    "version", ["", "1", "1.0", "v1.0.0", "01.0.0", "1.0.0-", "1.0.0-01", "latest", "1.0.0.0"]
)
def test_bad_versions_are_rejected(version: str) -> None:
    message = _error(version=version)

    assert f"not a semantic version (MAJOR.MINOR.PATCH): {version!r}" in message


def test_a_version_with_a_trailing_newline_is_rejected() -> None:
    message = _error(version="1.0.0\n")

    assert "not a semantic version" in message


@pytest.mark.parametrize("version", ["0.0.0", "1.2.3", "2.0.0-rc.1", "1.0.0+build.7"])
def test_good_versions_are_accepted(version: str) -> None:
    descriptor = ToolDescriptor(**_fields(version=version))

    assert descriptor.tool_id == f"count@{version}"


def test_unknown_fields_and_empty_descriptions_are_rejected() -> None:
    assert "extra" in _error(colour="red").lower()
    assert "description" in _error(description="")
    with pytest.raises(ValidationError):
        ToolExample(description="", arguments={})
    with pytest.raises(ValidationError):
        ToolExample.model_validate({"description": "x", "arguments": {}, "result": 1})


@pytest.mark.parametrize("limit", [0, -1])
def test_time_limit_must_be_positive(limit: float) -> None:
    assert "time_limit_s" in _error(time_limit_s=limit)


def test_unknown_permission_and_risk_are_rejected() -> None:
    assert "permission" in _error(permission="root")
    assert "risk" in _error(risk="extreme")


def test_descriptor_is_frozen() -> None:
    descriptor = ToolDescriptor(**_fields())

    with pytest.raises(ValidationError):
        descriptor.name = "other"  # type: ignore[misc]


def test_registry_holds_the_six_builtins(registry: ToolRegistry) -> None:
    assert registry.names() == BUILTINS


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_descriptor_json_round_trips(registry: ToolRegistry, name: str) -> None:
    tool = registry.get(name)
    assert tool is not None
    descriptor = tool.descriptor

    data = descriptor.model_dump(mode="json")

    assert set(data) == DESCRIPTOR_KEYS
    assert data["permission"] in {level.value for level in PermissionLevel}
    assert data["risk"] in {risk.value for risk in Risk}
    assert len(data["examples"]) >= 3
    assert all(set(example) == {"description", "arguments"} for example in data["examples"])
    assert ToolDescriptor.model_validate(json.loads(json.dumps(data))) == descriptor
    assert ToolDescriptor.model_validate_json(descriptor.model_dump_json()) == descriptor


def test_tool_call_defaults_and_limits() -> None:
    first = ToolCall(tool_name="read")
    second = ToolCall(tool_name="read")

    assert first.id != second.id
    assert len(first.id) == 32
    assert first.arguments == {}
    assert first.version is None
    assert first.agent_id is None
    with pytest.raises(ValidationError):
        ToolCall(tool_name="")
    with pytest.raises(ValidationError):
        ToolCall(tool_name="read", id="")
    with pytest.raises(ValidationError):
        ToolCall.model_validate({"tool_name": "read", "args": {}})


def test_tool_result_json_shape() -> None:
    result = ToolResult(
        call_id="c1",
        tool_name="read",
        tool_version="1.0.0",
        status=ToolStatus.SUCCESS,
        output={"content": "x"},
        metadata={"execution_time_ms": 1.5},
    )

    data = json.loads(result.model_dump_json())

    assert data == {
        "call_id": "c1",
        "tool_name": "read",
        "tool_version": "1.0.0",
        "status": "success",
        "output": {"content": "x"},
        "error": None,
        "metadata": {"execution_time_ms": 1.5},
    }
    assert result.ok
    assert not result.model_copy(update={"status": ToolStatus.DENIED}).ok


def test_statuses_are_the_documented_ones() -> None:
    assert {status.value for status in ToolStatus} == {
        "queued",
        "running",
        "success",
        "error",
        "blocked",
        "timeout",
        "awaiting_approval",
        "denied",
        "cancelled",
    }


def test_parse_turns_a_bad_descriptor_into_one_clear_error() -> None:
    data = ToolDescriptor.parse(READ_DESCRIPTOR.model_dump(mode="json")).model_dump(mode="json")
    data["examples"] = data["examples"][:2]
    data["version"] = "one"

    with pytest.raises(InvalidDescriptor) as caught:
        ToolDescriptor.parse(data)

    message = str(caught.value)
    assert message.startswith("invalid tool descriptor:")
    assert "version" in message
    assert "not a semantic version" in message
    assert "Traceback" not in message

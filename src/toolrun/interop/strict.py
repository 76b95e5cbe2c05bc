"""OpenAI's strict mode for function parameters, as OpenAI documents it: every object
closes (`additionalProperties: false`) and lists every property in `required`, a property
the tool does not require becomes nullable (the model sends null to leave it out), and
only the keywords strict mode supports remain. `without_nulls` undoes the nulls before a
call reaches toolrun. A schema that cannot be made strict without changing what it
accepts (an open map, `allOf`, `not`...) is exported without `strict`."""

from __future__ import annotations

import json
from typing import Any

# What strict mode accepts, and what toolrun drops because it validates each call anyway.
_KEPT = frozenset(
    {
        "type",
        "description",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
_DROPPED = frozenset(
    {"default", "examples", "minLength", "maxLength", "uniqueItems", "$schema", "$comment"}
)
MAX_DEPTH = 10  # OpenAI's limit on nested objects
# A strict schema says what it takes: a part with none of these (any value) cannot be one.
_SAYS_WHAT = frozenset({"type", "anyOf", "$ref", "enum", "const"})


class _NotStrict(Exception):
    """The schema has a part strict mode cannot express."""


def strict_parameters(schema: dict[str, Any]) -> dict[str, Any] | None:
    """`schema` as strict mode takes it, or None when it cannot be made strict."""
    if schema.get("type") != "object":
        return None
    try:
        return _strict(schema, 0)
    except _NotStrict:
        return None


def _strict(schema: Any, depth: int) -> dict[str, Any]:
    if (
        not isinstance(schema, dict)
        or depth > MAX_DEPTH
        or set(schema) - _KEPT - _DROPPED
        or not set(schema) & _SAYS_WHAT
    ):
        raise _NotStrict
    made = {key: value for key, value in schema.items() if key in _KEPT}
    if "default" in schema:
        shown = f"Default: {json.dumps(schema['default'])}."
        made["description"] = f"{schema.get('description', '')} {shown}".strip()
    if "properties" in schema or _types(schema) & {"object"}:
        made |= _closed(schema, depth)
    if "items" in schema:
        made["items"] = _strict(schema["items"], depth + 1)
    if "anyOf" in schema:
        made["anyOf"] = [_strict(option, depth + 1) for option in schema["anyOf"]]
    if "$defs" in schema:
        made["$defs"] = {name: _strict(part, depth + 1) for name, part in schema["$defs"].items()}
    return made


def _closed(schema: dict[str, Any], depth: int) -> dict[str, Any]:
    """An object's keywords with every property required, the optional ones nullable."""
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    if not isinstance(properties, dict) or not (extra is False or (extra is None and properties)):
        raise _NotStrict  # keys the schema leaves open cannot all be listed
    required = set(schema.get("required", []))
    return {
        "properties": {
            name: _strict(part, depth + 1)
            if name in required
            else _nullable(_strict(part, depth + 1))
            for name, part in properties.items()
        },
        "required": list(properties),
        "additionalProperties": False,
    }


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type", [])
    return {declared} if isinstance(declared, str) else set(declared)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "type" not in schema or "const" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    made = dict(schema)
    made["type"] = sorted(_types(schema) | {"null"})
    if "enum" in made and None not in made["enum"]:
        made["enum"] = [*made["enum"], None]
    return made


def without_nulls(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`arguments` without the nulls strict mode made the model send for the properties
    it left out (optional ones whose own schema takes no null), at every level."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    kept = {}
    for name, value in arguments.items():
        part = properties.get(name)
        if not isinstance(part, dict):
            kept[name] = value
        elif value is None and name not in required and not _takes_null(part):
            continue
        elif isinstance(value, dict):
            kept[name] = without_nulls(value, part)
        elif isinstance(value, list) and isinstance(part.get("items"), dict):
            kept[name] = [
                without_nulls(item, part["items"]) if isinstance(item, dict) else item
                for item in value
            ]
        else:
            kept[name] = value
    return kept


def _takes_null(schema: dict[str, Any]) -> bool:
    if "null" in _types(schema) or ("enum" in schema and None in schema["enum"]):
        return True
    return any(_takes_null(option) for option in schema.get("anyOf", []))

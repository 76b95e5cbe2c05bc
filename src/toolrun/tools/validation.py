"""Argument validation that names each problem in one line an agent can act on."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from toolrun.errors import InvalidArguments

_TYPE_NAMES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _strict_integer(_checker: object, value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# Draft 2020-12 counts 1.0 as an integer; tools index and slice with integers, so we don't.
_TYPE_CHECKER = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer)
_Validator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, type_checker=_TYPE_CHECKER
)

_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def validator_for(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    """A Draft 2020-12 validator for a (meta-schema-checked) parameters schema."""
    validator: jsonschema.protocols.Validator = _Validator(schema)
    return validator


def validate_arguments(validator: jsonschema.protocols.Validator, arguments: object) -> None:
    """Raises InvalidArguments listing every problem, most specific first."""
    problems = argument_errors(validator, arguments)
    if problems:
        raise InvalidArguments(problems)


def argument_errors(validator: jsonschema.protocols.Validator, arguments: object) -> str:
    """All schema violations of `arguments`, in parameter order, as one '; '-joined line."""
    if not isinstance(arguments, Mapping):
        return f"arguments must be an object, got {_describe(arguments)}"
    if (where := _non_finite(arguments)) is not None:
        # JSON parsers accept NaN and Infinity; no tool can use them.
        return f"parameter '{where}' must be a finite number"
    errors = sorted(
        validator.iter_errors(arguments), key=lambda e: (list(e.absolute_path), e.validator)
    )
    return "; ".join(dict.fromkeys(explain(error) for error in errors))


def with_defaults(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` plus the top-level defaults the schema declares for missing parameters."""
    filled = dict(arguments)
    for name, spec in schema.get("properties", {}).items():
        if name not in filled and isinstance(spec, Mapping) and "default" in spec:
            filled[name] = spec["default"]
    return filled


def explain(error: ValidationError) -> str:
    """One schema violation in words an agent can act on."""
    where = _path(error)
    kind = error.validator
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        prefix = f"{where}." if where else ""
        return f"missing required parameter: {prefix}{missing}"
    if kind == "additionalProperties":
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        given = error.instance if isinstance(error.instance, Mapping) else {}
        extras = sorted(set(given) - set(known))
        return "unknown parameter" + ("s" if len(extras) > 1 else "") + ": " + ", ".join(extras)
    subject = f"parameter '{where}'" if where else "arguments"
    if kind == "type":
        expected = error.validator_value
        wanted = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return f"{subject} must be {wanted}, got {_describe(error.instance)}"
    if kind == "enum":
        options = ", ".join(json.dumps(v) for v in _as_list(error.validator_value))
        return f"{subject} must be one of {options}, got {_describe(error.instance)}"
    if kind in _BOUNDS:
        bound = f"{_BOUNDS[str(kind)]} {error.validator_value}"
        return f"{subject} must be {bound}, got {_describe(error.instance)}"
    if kind == "minLength" and error.validator_value == 1:
        return f"{subject} must not be empty"
    return f"{subject}: {error.message}"


def _non_finite(value: object, where: str = "") -> str | None:
    """Path of the first NaN or infinite number inside `value`, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "(value)"
    children: Iterable[tuple[str, object]] = ()
    if isinstance(value, Mapping):
        children = ((f"{where}.{key}" if where else str(key), item) for key, item in value.items())
    elif isinstance(value, list):
        children = ((f"{where}[{index}]", item) for index, item in enumerate(value))
    for path, item in children:
        if (found := _non_finite(item, path)) is not None:
            return found
    return None


def _as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _path(error: ValidationError) -> str:
    parts = [str(p) if isinstance(p, str) else f"[{p}]" for p in error.absolute_path]
    return ".".join(parts).replace(".[", "[")


def _describe(value: object) -> str:
    text = json.dumps(value, default=repr)
    if len(text) > 60:
        text = text[:57] + "..."
    if isinstance(value, str):
        return text
    return f"{_TYPE_NAMES.get(type(value), type(value).__name__)} {text}"

"""What selection knows of a tool: its name, description, parameters (a JSON Schema
object), tags and category — from the registry, or from a list in the OpenAI function
format or the BFCL format."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema.protocols

from toolrun.selection.requests import requests_of
from toolrun.tools.model import ToolDescriptor
from toolrun.tools.validation import validator_for

# BFCL and Seal-Tools spell types the Python way.
_PYTHON_TYPES = {
    "dict": "object",
    "float": "number",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "any": "string",
    "set": "array",
}


_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")


class CardError(ValueError):
    """A tool in an external list that is not a function description."""


@dataclass(frozen=True)
class ToolCard:
    """One candidate tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    tags: tuple[str, ...] = ()
    category: str | None = None
    examples: tuple[str, ...] = ()  # descriptions of example calls
    requests: tuple[str, ...] = ()  # requests made of it (built-in tools: `requests`)
    permission: str | None = None  # read_only … admin (registry tools)
    cost: float | None = None  # 0 to 1, where a supplied tool states one
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @functools.cached_property
    def properties(self) -> dict[str, dict[str, Any]]:
        found = self.parameters.get("properties")
        if not isinstance(found, dict):
            return {}
        return {name: spec for name, spec in found.items() if isinstance(spec, dict)}

    @property
    def texts(self) -> tuple[str, ...]:
        """What the tool does, in short sentences (for embedding): its name spelt out with
        the first sentence of its description, each example's description, then the
        requests made of it."""
        summary = _FIRST_SENTENCE.split(self.description.strip(), maxsplit=1)[0]
        name = re.sub(r"[_.]+", " ", self.name)
        return (f"{name}: {summary}", *self.examples, *self.requests)

    @functools.cached_property
    def required(self) -> list[str]:
        found = self.parameters.get("required")
        return [name for name in found if name in self.properties] if found else []

    @functools.cached_property
    def validator(self) -> jsonschema.protocols.Validator:
        """The parameters' validator (built once per card)."""
        return validator_for(self.parameters)

    @classmethod
    def of(cls, descriptor: ToolDescriptor) -> ToolCard:
        return cls(
            name=descriptor.name,
            description=descriptor.description,
            parameters=descriptor.parameters,
            tags=tuple(descriptor.tags),
            category=descriptor.category,
            examples=tuple(example.description for example in descriptor.examples),
            requests=requests_of(descriptor.tool_id),
            permission=descriptor.permission.value,
        )

    @classmethod
    def parse(cls, data: object) -> ToolCard:
        """A tool in the OpenAI function format (``{"type": "function", "function": {...}}``
        or the bare function), the BFCL format or the Seal-Tools format.

        Raises:
            CardError: no name, or parameters that are not an object schema.
        """
        if not isinstance(data, dict):
            raise CardError("a tool must be a JSON object")
        function: dict[str, Any] = data
        if data.get("type") == "function" and isinstance(data.get("function"), dict):
            function = data["function"]
        return cls._parse_function(function)

    @classmethod
    def parse_list(cls, tools: Sequence[object]) -> list[ToolCard]:
        """Cards for a supplied tool list, names unique.

        Raises:
            CardError: which tool cannot be read and why, or a name used twice.
        """
        cards = []
        for index, tool in enumerate(tools):
            try:
                cards.append(cls.parse(tool))
            except CardError as exc:
                raise CardError(f"tools[{index}]: {exc}") from exc
        if len({card.name for card in cards}) != len(cards):
            raise CardError("tools: two tools have the same name")
        return cards

    @classmethod
    def _parse_function(cls, data: dict[str, Any]) -> ToolCard:
        name = data.get("name", data.get("api_name"))
        if not isinstance(name, str) or not name:
            raise CardError("a tool needs a non-empty name")
        description = data.get("description", data.get("api_description")) or ""
        parameters = data.get("parameters")
        parameters = {} if parameters is None else parameters
        if not isinstance(parameters, dict):
            raise CardError(f"tool {name}: parameters must be an object")
        if "api_name" in data:  # Seal-Tools: parameters are the properties
            parameters = {
                "type": "object",
                "properties": parameters,
                "required": data.get("required") or [],
            }
        schema = json_schema(parameters)
        if schema.get("type", "object") != "object":
            raise CardError(f"tool {name}: parameters must be a schema of type object")
        stated = data.get("cost")
        return cls(
            name=name,
            description=str(description),
            parameters=schema,
            category=data.get("field") if isinstance(data.get("field"), str) else None,
            cost=None
            if isinstance(stated, bool) or not isinstance(stated, int | float)
            else stated,
        )


def json_schema(schema: Any) -> Any:
    """`schema` with Python type names as JSON Schema ones, recursively."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: json_schema(value) for key, value in schema.items()}
    kind = converted.get("type")
    if isinstance(kind, str):
        converted["type"] = _PYTHON_TYPES.get(kind, kind)
    return converted

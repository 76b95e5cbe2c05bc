"""References from one node's output into another node's arguments.

Anywhere in a node's arguments, an object with the single key ``$ref`` is replaced, when
the node becomes ready, by a value taken from an earlier node's result::

    {"$ref": "find.output"}                  the whole output of node `find`
    {"$ref": "find.output.files[0]"}         a key, then an index
    {"$ref": "find.output[\"odd key\"]"}     a key that is not a plain name
    {"$ref": "find.output.files[-1]"}        negative indexes count from the end

The value keeps its JSON type (a list stays a list). A reference makes its node depend on
the node it names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from toolrun.errors import ToolrunError

REF_KEY = "$ref"
_HEAD = re.compile(r"(?P<node>[A-Za-z][A-Za-z0-9_-]{0,63})\.output")
_STEP = re.compile(
    r"\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)"  # .name
    r"|\[(?P<index>-?\d+)\]"  # [0], [-1]
    r'|\[(?P<key>"(?:[^"\\]|\\.)*")\]'  # ["any key"], JSON-quoted
)

Step = str | int
Where = tuple[Step, ...]  # a position inside a node's arguments


class BadReference(ToolrunError):
    """A reference that does not parse, or names a value that is not there."""


@dataclass(frozen=True)
class Reference:
    """``node.output`` followed by `path` (keys and indexes)."""

    text: str
    node: str
    path: tuple[Step, ...]

    @classmethod
    def parse(cls, text: object) -> Reference:
        """Raises BadReference naming what is wrong."""
        if not isinstance(text, str):
            raise BadReference(f"a $ref must be a string like 'node.output.key', got {text!r}")
        head = _HEAD.match(text)
        if head is None:
            raise BadReference(f"$ref {text!r} must start with '<node id>.output'")
        path: list[Step] = []
        at = head.end()
        while at < len(text):
            step = _STEP.match(text, at)
            if step is None:
                raise BadReference(
                    f'$ref {text!r}: cannot read {text[at:]!r} (use .name, [index] or ["key"])'
                )
            if step["name"] is not None:
                path.append(step["name"])
            elif step["index"] is not None:
                path.append(int(step["index"]))
            else:
                try:
                    path.append(json.loads(step["key"]))
                except json.JSONDecodeError as exc:
                    raise BadReference(
                        f"$ref {text!r}: {step['key']} is not a valid JSON string ({exc.msg})"
                    ) from exc
            at = step.end()
        return cls(text, head["node"], tuple(path))

    def value_in(self, output: Any) -> Any:
        """The referenced value inside node `self.node`'s output.

        Raises:
            BadReference: a key or index that is not there, naming how far it got.
        """
        value = output
        for depth, step in enumerate(self.path):
            where = self._shown(depth)
            if isinstance(step, int):
                if not isinstance(value, list):
                    raise BadReference(f"$ref {self.text!r}: {where} is not a list")
                if not -len(value) <= step < len(value):
                    raise BadReference(
                        f"$ref {self.text!r}: index {step} is out of range "
                        f"({where} has {len(value)} items)"
                    )
            elif not isinstance(value, Mapping):
                raise BadReference(f"$ref {self.text!r}: {where} is not an object")
            elif step not in value:
                raise BadReference(f"$ref {self.text!r}: {where} has no key {step!r}")
            value = value[step]
        return value

    def _shown(self, depth: int) -> str:
        shown = f"{self.node}.output"
        for step in self.path[:depth]:
            shown += f"[{step}]" if isinstance(step, int) else f".{step}"
        return shown


def dotted(steps: Iterable[object]) -> str:
    """A path as text: ``files[0].name``."""
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else str(step)
    return text


def is_reference(value: object) -> TypeGuard[Mapping[str, object]]:
    return isinstance(value, Mapping) and len(value) == 1 and REF_KEY in value


def references(arguments: object, where: Where = ()) -> Iterator[tuple[Where, object]]:
    """Every ``{"$ref": ...}`` in `arguments`: (position, the raw reference text)."""
    if is_reference(arguments):
        yield where, arguments[REF_KEY]
    elif isinstance(arguments, Mapping):
        for key, value in arguments.items():
            yield from references(value, (*where, key))
    elif isinstance(arguments, list):
        for index, value in enumerate(arguments):
            yield from references(value, (*where, index))


def resolve(arguments: Any, outputs: Mapping[str, Any]) -> Any:
    """`arguments` with each reference replaced by its value from `outputs` (node id →
    output).

    Raises:
        BadReference: a reference that does not parse or names a missing value.
    """
    if is_reference(arguments):
        reference = Reference.parse(arguments[REF_KEY])
        if reference.node not in outputs:
            raise BadReference(f"$ref {reference.text!r}: node {reference.node!r} has no output")
        return reference.value_in(outputs[reference.node])
    if isinstance(arguments, Mapping):
        return {key: resolve(value, outputs) for key, value in arguments.items()}
    if isinstance(arguments, list):
        return [resolve(value, outputs) for value in arguments]
    return arguments

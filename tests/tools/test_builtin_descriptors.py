"""The built-in descriptors, checked in full: `ToolDescriptor.builtin` skips the meta-schema
check of their schemas at import, so this is where a broken one fails."""

from __future__ import annotations

from typing import Any

import pytest

from toolrun.errors import InvalidDescriptor
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import ToolDescriptor, ToolExample
from toolrun.tools.builtin import builtin_tools

DESCRIPTORS = [tool.descriptor for tool in builtin_tools()]


@pytest.mark.parametrize("descriptor", DESCRIPTORS, ids=[d.name for d in DESCRIPTORS])
def test_each_builtin_descriptor_passes_every_check(descriptor: ToolDescriptor) -> None:
    # Parsed from its JSON form as a plugin's would be: schemas against the meta-schema too.
    parsed = ToolDescriptor.parse(descriptor.model_dump(mode="json"))

    assert parsed == descriptor


def _fields(**changes: Any) -> dict[str, Any]:
    return {
        "name": "broken",
        "version": "1.0.0",
        "description": "A descriptor whose parameters are not a JSON Schema.",
        "parameters": {"type": "object", "properties": {"x": {"type": "nope"}}},
        "returns": {"type": "object"},
        "examples": [ToolExample(description=str(i), arguments={}) for i in range(3)],
        "permission": PermissionLevel.READ_ONLY,
        **changes,
    }


def test_the_builtin_construction_skips_only_the_meta_schema_check() -> None:
    broken = ToolDescriptor.builtin(**_fields())

    with pytest.raises(InvalidDescriptor, match="not a valid JSON Schema"):
        ToolDescriptor.parse(broken.model_dump(mode="json"))
    with pytest.raises(ValueError, match="at least 3 examples"):
        ToolDescriptor.builtin(**_fields(examples=[]))
    with pytest.raises(ValueError, match="tool name"):
        ToolDescriptor.builtin(**_fields(name="Broken"))

"""Markdown docs rendered from descriptors."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.conftest import BUILTINS

from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import Risk, ToolDescriptor, ToolExample, ToolRegistry, render_markdown

SECTIONS = ["## Description", "## Parameters", "## Returns", "## Examples", "## Notes"]
TABLE_HEADER = "| name | type | required | default | description |"
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _descriptor(**overrides: Any) -> ToolDescriptor:
    fields: dict[str, Any] = {
        "name": "sample",
        "version": "2.1.0",
        "description": "Do a sample thing.",
        "parameters": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
                "paths": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": ["integer", "null"], "description": "Cap | or none\nat all."},
                "anything": {},
            },
            "required": ["paths"],
        },
        "returns": {"type": "string"},
        "examples": [
            ToolExample(description="one path", arguments={"paths": ["a"]}),
            ToolExample(description="fast", arguments={"paths": [], "mode": "fast"}),
            ToolExample(description="capped", arguments={"paths": ["b"], "limit": 3}),
        ],
        "permission": PermissionLevel.READ_WRITE,
    }
    fields.update(overrides)
    return ToolDescriptor(**fields)


def _section(markdown: str, heading: str) -> str:
    start = markdown.index(heading + "\n") + len(heading) + 1
    following = [markdown.index(h, start) for h in SECTIONS if h in markdown[start:]]
    return markdown[start : min(following, default=len(markdown))].strip("\n")


def _row(markdown: str, name: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(f"| `{name}` |"))


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_docs_have_every_section(registry: ToolRegistry, name: str) -> None:
    tool = registry.get(name)
    assert tool is not None
    descriptor = tool.descriptor

    markdown = render_markdown(descriptor)

    assert markdown.startswith(f"# {name} {descriptor.version}\n")
    assert markdown.endswith("\n")
    positions = [markdown.index(f"\n{heading}\n") for heading in SECTIONS]
    assert positions == sorted(positions)
    assert descriptor.description in _section(markdown, "## Description")
    parameters = _section(markdown, "## Parameters")
    assert parameters.startswith(TABLE_HEADER)
    required = set(descriptor.parameters.get("required", []))
    for parameter, spec in descriptor.parameters["properties"].items():
        cells = [c.strip() for c in _row(parameters, parameter).split(" | ")]
        assert cells[2] == ("yes" if parameter in required else "no")
        assert cells[3] == (json.dumps(spec["default"]) if "default" in spec else "")
    assert _section(markdown, "## Returns")
    examples = _section(markdown, "## Examples")
    for example in descriptor.examples:
        assert f"- {example.description}" in examples
        assert json.dumps(example.arguments) in examples
    notes = _section(markdown, "## Notes")
    for note in descriptor.notes:
        assert f"- {note}" in notes


def test_builtin_docs_show_permission_and_confirmation(registry: ToolRegistry) -> None:
    bash = registry.get("bash")
    read = registry.get("read")
    assert bash is not None
    assert read is not None

    bash_docs, read_docs = render_markdown(bash.descriptor), render_markdown(read.descriptor)

    assert "Permission `execute` · risk `high`" in bash_docs
    assert "mapped to a policy" in bash_docs
    assert "Permission `read_only` · risk `low`" in read_docs
    assert "requires confirmation" not in read_docs.splitlines()[2]


def test_read_parameter_rows(registry: ToolRegistry) -> None:
    read = registry.get("read")
    assert read is not None

    markdown = render_markdown(read.descriptor)

    assert _row(markdown, "file_path").startswith("| `file_path` | string | yes |  | ")
    assert _row(markdown, "offset").startswith("| `offset` | integer | no | 1 | ")
    assert _row(markdown, "limit").startswith("| `limit` | integer | no | 2000 | ")


def test_header_line_of_a_custom_tool() -> None:
    markdown = render_markdown(
        _descriptor(
            risk=Risk.MEDIUM,
            category="demo",
            time_limit_s=2.5,
            requires_confirmation=True,
            tags=["x", "y"],
        )
    )

    lines = markdown.splitlines()
    assert lines[0] == "# sample 2.1.0"
    assert lines[2] == (
        "Permission `read_write` · risk `medium` · category `demo` · time limit 2.5 s"
        " · requires confirmation"
    )
    assert lines[3] == "Tags: `x`, `y`"


def test_types_enums_and_defaults_are_rendered() -> None:
    markdown = render_markdown(_descriptor())

    assert _row(markdown, "mode") == '| `mode` | string ("fast", "safe") | no | "safe" |  |'
    assert _row(markdown, "paths") == "| `paths` | array of string | yes |  |  |"
    assert (
        _row(markdown, "limit") == "| `limit` | integer or null | no |  | Cap \\| or none at all. |"
    )
    assert _row(markdown, "anything") == "| `anything` | any | no |  |  |"


def test_every_table_row_has_five_cells() -> None:
    parameters = {
        "type": "object",
        "properties": {"sep": {"type": "string", "enum": ["a|b", "c"], "default": "a|b"}},
    }
    examples = [ToolExample(description=str(i), arguments={}) for i in range(3)]

    markdown = render_markdown(_descriptor(parameters=parameters, examples=examples))

    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    assert rows
    for row in rows:
        assert len(UNESCAPED_PIPE.findall(row)) == 6, row


def test_returns_without_properties_shows_the_type() -> None:
    markdown = render_markdown(_descriptor())

    assert _section(markdown, "## Returns") == "string"


def test_returns_with_properties_is_a_table() -> None:
    returns = {"type": "object", "properties": {"count": {"type": "integer"}}}

    markdown = render_markdown(_descriptor(returns=returns))

    returns_section = _section(markdown, "## Returns")
    assert returns_section.startswith(TABLE_HEADER)
    assert "| `count` | integer | no |  |  |" in returns_section


def test_empty_parameters_and_notes_say_none() -> None:
    examples = [ToolExample(description=str(i), arguments={}) for i in range(3)]

    markdown = render_markdown(
        _descriptor(parameters={"type": "object"}, examples=examples, notes=[])
    )

    assert _section(markdown, "## Parameters") == "None."
    assert _section(markdown, "## Notes") == "None."


def test_examples_are_json_blocks() -> None:
    markdown = render_markdown(_descriptor())

    assert '- fast\n\n  ```json\n  {"paths": [], "mode": "fast"}\n  ```\n' in markdown

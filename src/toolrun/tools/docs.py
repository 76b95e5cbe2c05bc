"""Markdown documentation rendered from a descriptor: the one source of tool docs."""

from __future__ import annotations

import json
from typing import Any

from toolrun.tools.model import ToolDescriptor


def render_markdown(descriptor: ToolDescriptor) -> str:
    """Sections: Description, Parameters, Returns, Examples, Notes."""
    d = descriptor
    lines = [
        f"# {d.name} {d.version}",
        "",
        f"Permission `{d.permission}` · risk `{d.risk}` · category `{d.category}` · "
        f"time limit {d.time_limit_s:g} s"
        + (" · requires confirmation" if d.requires_confirmation else "")
        + (" · repeat-safe" if d.repeat_safe else ""),
    ]
    if d.tags:
        lines.append("Tags: " + ", ".join(f"`{t}`" for t in d.tags))
    lines += ["", "## Description", "", d.description, "", "## Parameters", ""]
    lines += _properties_table(d.parameters)
    lines += ["", "## Returns", ""]
    lines += _properties_table(d.returns) if d.returns.get("properties") else [_type_of(d.returns)]
    lines += ["", "## Examples", ""]
    for example in d.examples:
        lines += [
            f"- {example.description}",
            "",
            "  ```json",
            f"  {json.dumps(example.arguments)}",
            "  ```",
            "",
        ]
    lines += ["## Notes", ""]
    lines += [f"- {note}" for note in d.notes] or ["None."]
    return "\n".join(lines) + "\n"


def _properties_table(schema: dict[str, Any]) -> list[str]:
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return ["None."]
    required = set(schema.get("required", []))
    rows = ["| name | type | required | default | description |", "|---|---|---|---|---|"]
    for name, spec in properties.items():
        default = json.dumps(spec["default"]) if "default" in spec else ""
        rows.append(
            f"| `{name}` | {_cell(_type_of(spec))} | {'yes' if name in required else 'no'} | "
            f"{_cell(default)} | {_cell(spec.get('description', ''))} |"
        )
    return rows


def _type_of(spec: dict[str, Any]) -> str:
    kind = spec.get("type")
    if isinstance(kind, list):
        text = " or ".join(kind)
    elif kind == "array" and isinstance(spec.get("items"), dict):
        text = f"array of {_type_of(spec['items'])}"
    else:
        text = str(kind) if kind else "any"
    if "enum" in spec:
        text += " (" + ", ".join(json.dumps(v) for v in spec["enum"]) + ")"
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")

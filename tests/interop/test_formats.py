"""Exported tool shapes: OpenAI, Anthropic and MCP, names made API-safe, annotations from
the permission level, the newest version only."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from toolrun.interop.formats import ExportFormat, api_name, export, mcp_annotations
from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Selector
from toolrun.tools import ToolRegistry
from toolrun.tools.model import ToolDescriptor

BUILTINS = [tool.descriptor for tool in ToolRegistry.with_builtins().list()]
ROOT = Path(__file__).resolve().parents[2]
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# The shapes the APIs document (the parts toolrun fills).
OPENAI_TOOL = {
    "type": "object",
    "required": ["type", "function"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "description", "parameters"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": API_NAME.pattern},
                "description": {"type": "string", "minLength": 1},
                "parameters": {"type": "object", "properties": {"type": {"const": "object"}}},
                "strict": {"type": "boolean"},
            },
        },
    },
}
ANTHROPIC_TOOL = {
    "type": "object",
    "required": ["name", "description", "input_schema"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": API_NAME.pattern},
        "description": {"type": "string"},
        "input_schema": {"type": "object", "required": ["type"]},
    },
}
MCP_TOOL = {
    "type": "object",
    "required": ["name", "inputSchema"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]{1,128}$"},
        "description": {"type": "string"},
        "inputSchema": {"type": "object", "properties": {"type": {"const": "object"}}},
        "outputSchema": {"type": "object", "properties": {"type": {"const": "object"}}},
        "annotations": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "title": {"type": "string"},
                "readOnlyHint": {"type": "boolean"},
                "destructiveHint": {"type": "boolean"},
                "idempotentHint": {"type": "boolean"},
                "openWorldHint": {"type": "boolean"},
            },
        },
    },
}


def descriptor(name: str, version: str = "1.0.0", **changes: Any) -> ToolDescriptor:
    read = next(d for d in BUILTINS if d.name == "read")
    return read.model_copy(update={"name": name, "version": version, **changes})


@pytest.mark.parametrize(
    ("format", "shape"),
    [
        (ExportFormat.OPENAI, OPENAI_TOOL),
        (ExportFormat.ANTHROPIC, ANTHROPIC_TOOL),
        (ExportFormat.MCP, MCP_TOOL),
    ],
)
def test_every_builtin_exports_in_each_shape(format: ExportFormat, shape: dict[str, Any]) -> None:
    exported = export(BUILTINS, format)

    assert len(exported) == len({d.name for d in BUILTINS})
    for tool in exported:
        jsonschema.validate(tool, shape)


@pytest.mark.parametrize(
    ("format", "schema_of"),
    [
        (ExportFormat.OPENAI, lambda tool: tool["function"]["parameters"]),
        (ExportFormat.ANTHROPIC, lambda tool: tool["input_schema"]),
        (ExportFormat.MCP, lambda tool: tool["inputSchema"]),
    ],
)
def test_no_export_has_a_combinator_or_condition_at_its_top(
    format: ExportFormat, schema_of: Any
) -> None:
    """Anthropic's Messages API refuses a tool whose input_schema has allOf, anyOf or
    oneOf at its top (every request that lists it fails), OpenAI's likewise; the
    terminal's schema says with if/then what each operation needs, which toolrun checks."""
    refused = {"allOf", "anyOf", "oneOf", "not", "if", "then", "else"}
    terminal = next(d for d in BUILTINS if d.name == "terminal")
    assert refused & set(terminal.parameters)  # what the export must leave out

    for tool in export(BUILTINS, format):
        schema = schema_of(tool)
        assert schema["type"] == "object"
        assert not refused & set(schema), tool
    strict = export(BUILTINS, ExportFormat.OPENAI, strict=True)
    assert not any(refused & set(t["function"]["parameters"]) for t in strict)


def test_namespaced_names_are_made_api_safe_and_collisions_refused() -> None:
    [openai] = export([descriptor("weather.forecast")], ExportFormat.OPENAI)
    [mcp] = export([descriptor("weather.forecast")], ExportFormat.MCP)

    assert openai["function"]["name"] == "weather_forecast"
    assert mcp["name"] == "weather.forecast"  # MCP allows dots
    assert api_name("a.b/c d" + "x" * 80) == ("a_b_c_d" + "x" * 80)[:64]
    with pytest.raises(ValueError, match="both export as 'weather_forecast'"):
        export(
            [descriptor("weather.forecast"), descriptor("weather_forecast")], ExportFormat.OPENAI
        )


def test_only_the_newest_version_of_a_tool_is_exported() -> None:
    old = descriptor("lookup", "1.0.0", description="Old lookup.")
    new = descriptor("lookup", "1.2.0", description="New lookup.")

    [tool] = export([new, old], ExportFormat.ANTHROPIC)

    assert tool["description"] == "New lookup."


@pytest.mark.parametrize(
    ("name", "hints"),
    [
        ("read", (True, False, True, False)),
        ("http_fetch", (True, False, True, True)),
        ("write", (False, True, False, False)),
        ("bash", (False, True, False, True)),
        ("git_push", (False, True, False, False)),
    ],
)
def test_mcp_annotations_follow_the_permission_level(name: str, hints: tuple[bool, ...]) -> None:
    found = mcp_annotations(next(d for d in BUILTINS if d.name == name))

    keys = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    assert tuple(found[key] for key in keys) == hints


def test_the_openai_export_loads_back_for_selection() -> None:
    exported = export(BUILTINS, ExportFormat.OPENAI)

    selection = Selector([ToolCard.parse(tool) for tool in exported]).select(
        'Read the file "notes.txt"'
    )

    assert selection.chosen == "read"
    assert selection.arguments == {"file_path": "notes.txt"}


def test_the_openai_export_runs_through_the_bfcl_harness(tmp_path: Path) -> None:
    tools = export(BUILTINS, ExportFormat.OPENAI)
    tasks = {"q0": 'Read the file "a.txt"', "q1": "Fetch the URL https://example.com/a with GET"}
    answers = {
        "q0": {"read": {"file_path": ["a.txt"]}},
        "q1": {"http_fetch": {"url": ["https://example.com/a"]}},
    }
    questions = tmp_path / "questions.json"
    truth = tmp_path / "answers.json"
    questions.write_text(
        "\n".join(
            json.dumps({"id": i, "question": [[{"role": "user", "content": t}]], "function": tools})
            for i, t in tasks.items()
        )
    )
    truth.write_text(
        "\n".join(json.dumps({"id": i, "ground_truth": [a]}) for i, a in answers.items())
    )

    done = subprocess.run(
        [sys.executable, "bench/selection.py", "--lexical", "bfcl", str(questions), str(truth)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout.splitlines()[-1])
    assert (measured["n"], measured["top1"], measured["arg_accuracy"]) == (2, 1.0, 1.0)

"""A plugin as a tool: its descriptor checked in full, and a local call of it run without
the process jail (the module runs in this process, under wasmtime's own limits)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.conftest import EXAMPLES, example_tool
from toolrun import local
from toolrun.config import Settings
from toolrun.errors import InvalidDescriptor
from toolrun.permissions.approvals import AutoApprover
from toolrun.plugins import WasmRuntime
from toolrun.plugins.tool import load_plugin_descriptor
from toolrun.tools import ToolCall, ToolRegistry, ToolStatus


def test_a_plugin_descriptor_whose_schema_is_not_a_json_schema_is_refused() -> None:
    data = json.loads((EXAMPLES / "wordcount" / "wordcount.json").read_text())
    data["parameters"]["properties"]["text"]["type"] = "nope"

    with pytest.raises(InvalidDescriptor, match="not a valid JSON Schema"):
        load_plugin_descriptor(data)


def test_a_local_plugin_call_sets_up_no_jail(
    built: dict[str, bytes], runtime: WasmRuntime, tmp_path: Path, jails: list[Settings]
) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    registry = ToolRegistry()
    registry.register(example_tool("filestat", built, runtime))

    result = local.run_local(
        Settings(workspace=tmp_path),
        registry,
        ToolCall(tool_name="filestat", arguments={"path": "notes.txt"}),
        workspace=None,
        approver=AutoApprover(),
        on_refused=lambda refusal: None,
    )

    assert result.status is ToolStatus.SUCCESS, result.error
    assert result.output == {"path": "notes.txt", "bytes": 8, "lines": 2}
    assert jails == []

"""Imported MCP tools: their risk from the remote annotations (or the operator's choice),
and a stdio command typed in one directory made to start from any other."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from toolrun.config import Settings
from toolrun.interop.mcp_imports import (
    ImportedTool,
    McpEndpoint,
    descriptor_of,
    imported_risk,
    resolved_command,
)
from toolrun.interop.mcp_proxy import McpProxyTool
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Policy, Risk
from toolrun.tools import ToolContext

RO, RW, EX, ADMIN = (
    PermissionLevel.READ_ONLY,
    PermissionLevel.READ_WRITE,
    PermissionLevel.EXECUTE,
    PermissionLevel.ADMIN,
)
READS = {"readOnlyHint": True}
ADDS = {"readOnlyHint": False, "destructiveHint": False}
DESTROYS = {"destructiveHint": True}


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (READS, {RO: "low", RW: "low", EX: "low", ADMIN: "low"}),
        (ADDS, {RO: "low", RW: "low", EX: "medium", ADMIN: "medium"}),
        (DESTROYS, {RO: "medium", RW: "medium", EX: "high", ADMIN: "high"}),
        ({}, {RO: "low", RW: "medium", EX: "high", ADMIN: "high"}),
    ],
)
def test_risk_follows_the_annotations_and_the_level(
    annotations: dict[str, Any], expected: dict[PermissionLevel, str]
) -> None:
    assert {level: imported_risk(annotations, level) for level in expected} == expected


def remote(annotations: Any) -> dict[str, Any]:
    return {"name": "wipe", "inputSchema": {"type": "object"}, "annotations": annotations}


def test_a_destructive_tool_at_execute_waits_for_an_operator(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", workspace=tmp_path)
    ctx = ToolContext.create(settings)
    endpoint = McpEndpoint(command=("unused",))
    derived = descriptor_of("fs", remote(DESTROYS), EX, 10)
    chosen = descriptor_of("fs", remote(DESTROYS), EX, 10, Risk.LOW)
    garbled = descriptor_of("fs", remote("not an object"), EX, 10)

    verdict = McpProxyTool(ImportedTool("wipe", derived), endpoint).verdict({}, ctx)
    waived = McpProxyTool(ImportedTool("wipe", chosen), endpoint).verdict({}, ctx)

    assert (verdict.policy, verdict.risk) == (Policy.DANGEROUS, Risk.HIGH)
    assert "fs.wipe runs 'wipe' on the MCP server 'fs'" in verdict.warning
    assert waived.policy is Policy.SAFE  # --risk low: the operator vouches for it
    assert garbled.risk is Risk.HIGH


def test_a_relative_command_is_made_absolute(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    server = tmp_path / "bin" / "server"
    server.parent.mkdir()
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)

    script = resolved_command(["sh", "bin/server", "data", "--flag", "not-here"], tmp_path)
    program = resolved_command(["bin/server", "-"], tmp_path)

    assert os.path.isabs(script[0])
    assert script[1:] == (str(server), str(tmp_path / "data"), "--flag", "not-here")
    assert program == (str(server), "-")


@pytest.mark.parametrize("command", [["no-such-program-here"], ["bin/missing"], ["."]])
def test_a_command_that_is_not_a_program_is_refused(tmp_path: Path, command: list[str]) -> None:
    with pytest.raises(ValueError, match=f"no program '{command[0]}'"):
        resolved_command(command, tmp_path)

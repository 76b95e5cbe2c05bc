"""The workflow toolpack: tools for staged agent pipelines (idea → PRD → design → plan →
coding → check → delivery), registered through the `toolrun.tools` entry point
(`TOOLRUN_TOOL_PACKS='["workflow"]'`; docs/workflow.md)."""

from __future__ import annotations

from toolrun.tools.base import Tool
from toolrun_workflow.artifacts import artifact_tools
from toolrun_workflow.checks import check_tools
from toolrun_workflow.commands import command_tools
from toolrun_workflow.interaction import interaction_tools
from toolrun_workflow.memory import memory_tools
from toolrun_workflow.records import record_tools


def tools() -> list[Tool]:
    """Every tool of the pack (the entry point's object)."""
    return [
        *artifact_tools(),
        *record_tools(),
        *check_tools(),
        *command_tools(),
        *interaction_tools(),
        *memory_tools(),
    ]

"""The workflow toolpack: tools for staged agent pipelines (idea → PRD → design → plan →
coding → check → delivery), registered through the `toolrun.tools` entry point
(`TOOLRUN_TOOL_PACKS='["workflow"]'`)."""

from __future__ import annotations

from toolrun.tools.base import Tool
from toolrun_workflow.artifacts import artifact_tools
from toolrun_workflow.records import record_tools


def tools() -> list[Tool]:
    """Every tool of the pack (the entry point's object)."""
    return [*artifact_tools(), *record_tools()]

"""The task tool's descriptor; its runs are in tests/subagents/test_task_local.py."""

from __future__ import annotations

from toolrun.subagents.definition import AGENTS_DIR
from toolrun.tools.builtin.task import TaskTool


def test_the_description_names_the_folder_sub_agents_are_read_from() -> None:
    # The catalog reads AGENTS_DIR too (tests/subagents/test_catalog.py spells it out).
    assert f"{AGENTS_DIR}/NAME.md" in TaskTool.descriptor.description

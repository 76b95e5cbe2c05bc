"""The workflow pack: registered through the toolrun.tools entry point, iterations with
stages, artifact documents and typed records with checked references — run through the
executor against a real (SQLite) database and workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrun.config import Settings
from toolrun.errors import ToolrunError
from toolrun.permissions.approvals import DenyApprover
from toolrun.tools import Executor, ToolCall, ToolContext, ToolResult
from toolrun.tools.loading import installed_packs, registry_with
from toolrun_workflow.iterations import IterationStore, store_for

PACK_TOOLS = {
    "start_iteration", "get_iteration", "save_idea", "save_prd_doc", "save_design_doc",
    "save_plan_doc", "save_delivery_report", "load_idea", "load_prd_doc", "load_design_doc",
    "create_requirement", "update_requirement", "delete_requirement", "get_requirements",
    "add_feature", "update_feature_status", "create_design_component", "get_design",
    "create_task", "update_task_status", "get_plan",
}  # fmt: skip


class Runner:
    def __init__(self, tmp_path: Path) -> None:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        self.workspace = workspace
        settings = Settings(workspace=workspace, home=tmp_path / "home")
        self.ctx = ToolContext.create(settings, approver=DenyApprover())
        self.executor = Executor(registry_with([], ["workflow"]))

    def __call__(self, tool: str, **arguments: Any) -> ToolResult:
        return self.executor.execute(ToolCall(tool_name=tool, arguments=arguments), self.ctx)

    def ok(self, tool: str, **arguments: Any) -> Any:
        result = self(tool, **arguments)
        assert result.ok, result.error
        return result.output


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    return Runner(tmp_path)


def test_the_pack_registers_through_its_entry_point_only_when_named() -> None:
    assert "workflow" in installed_packs()
    assert set(registry_with([], ["workflow"]).names()) >= PACK_TOOLS
    assert set(registry_with([], ["*"]).names()) >= PACK_TOOLS
    assert not PACK_TOOLS & set(registry_with([]).names())  # installing adds nothing
    with pytest.raises(ToolrunError, match=r"no tool pack named nope \(installed: .*workflow"):
        registry_with([], ["nope"])


def test_every_pack_tool_has_a_full_descriptor() -> None:
    registry = registry_with([], ["workflow"])
    for name in PACK_TOOLS:
        tool = registry.get(name)
        assert tool is not None
        descriptor = tool.descriptor
        assert descriptor.category == "workflow"
        assert len(descriptor.examples) >= 3
        assert descriptor.parameters["additionalProperties"] is False


def test_tools_need_a_current_iteration(run: Runner) -> None:
    result = run("get_iteration")

    assert result.status == "error"
    assert result.error == "no current iteration: start one with start_iteration"


def test_documents_are_saved_and_loaded_in_the_iterations_directory(run: Runner) -> None:
    started = run.ok("start_iteration", name="csv export")
    saved = run.ok("save_prd_doc", content="# PRD\n\nExport CSV.\n")
    loaded = run.ok("load_prd_doc")
    missing = run("load_design_doc")

    assert started["stage"] == "idea"
    assert saved["path"] == f".iterations/{started['id']}/prd.md"
    assert (run.workspace / saved["path"]).read_text() == "# PRD\n\nExport CSV.\n"
    assert loaded["content"] == "# PRD\n\nExport CSV.\n"
    assert missing.error == f"no design.md in iteration {started['id']} yet"


def test_a_new_iteration_becomes_current(run: Runner) -> None:
    first = run.ok("start_iteration", name="one")
    run.ok("save_idea", content="first idea")
    second = run.ok("start_iteration", name="two")

    assert run.ok("get_iteration")["id"] == second["id"] != first["id"]
    assert run("load_idea").status == "error"  # the new one has no idea yet


def test_requirements_are_created_updated_listed_and_deleted(run: Runner) -> None:
    run.ok("start_iteration", name="crud")
    made = run.ok(
        "create_requirement", title="Export", description="CSV export.", priority="Critical"
    )
    other = run.ok("create_requirement", title="Theme", description="Dark.", priority="Low")
    updated = run.ok("update_requirement", id=made["id"], status="approved")
    critical = run.ok("get_requirements", priority="Critical")
    bad_priority = run("create_requirement", title="X", description="Y", priority="Urgent")
    deleted = run.ok("delete_requirement", id=other["id"])
    gone = run("update_requirement", id=other["id"], status="approved")

    assert made["id"].startswith("req-")
    assert (made["status"], made["acceptance_criteria"]) == ("draft", [])
    assert updated["status"] == "approved"
    assert updated["updated_at"] >= made["updated_at"]
    assert [r["id"] for r in critical["requirements"]] == [made["id"]]
    assert bad_priority.status == "error"
    assert "priority" in (bad_priority.error or "")
    assert deleted == {"deleted": other["id"]}
    assert gone.error is not None
    assert gone.error.startswith(f"no requirement {other['id']!r}")


def test_references_must_name_existing_records(run: Runner) -> None:
    run.ok("start_iteration", name="refs")
    requirement = run.ok("create_requirement", title="A", description="a", priority="High")
    feature = run.ok("add_feature", title="F", description="f", requirement_ids=[requirement["id"]])
    dangling = run("add_feature", title="G", description="g", requirement_ids=["req-nope"])
    first = run.ok("create_task", title="T1", description="t", feature_ids=[feature["id"]])
    second = run.ok("create_task", title="T2", description="t", depends_on=[first["id"]])
    loop = run("create_task", title="T3", description="t", depends_on=["task-nope"])
    done = run.ok("update_task_status", id=first["id"], status="done")
    component = run.ok(
        "create_design_component", name="Exporter", description="e", feature_ids=[feature["id"]]
    )
    run.ok("save_design_doc", content="# Design")
    design = run.ok("get_design")
    plan = run.ok("get_plan")

    assert dangling.error == "requirement_ids names no existing requirement: req-nope"
    assert loop.error == "depends_on names no existing task: task-nope"
    assert done["status"] == "done"
    assert design == {"document": "# Design", "components": [component]}
    assert plan["document"] is None
    assert [t["id"] for t in plan["tasks"]] == [first["id"], second["id"]]


def test_the_stage_moves_only_along_allowed_transitions(tmp_path: Path, run: Runner) -> None:
    run.ok("start_iteration", name="stages")
    store: IterationStore = store_for(run.ctx)
    current = store.current()
    assert current is not None

    moved = store.move(current.id, "prd")

    assert moved.stage == "prd"
    with pytest.raises(ToolrunError, match="cannot go from prd to coding; from prd: design, idea"):
        store.move(current.id, "coding")

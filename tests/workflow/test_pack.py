"""The workflow pack: registered through the toolrun.tools entry point, iterations with
stages, artifact documents and typed records with checked references — run through the
executor against a real (SQLite) database and workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.workflow.runner import Runner

import toolrun_workflow
from toolrun.errors import ToolrunError
from toolrun.permissions.approvals import AutoApprover
from toolrun.tools.loading import installed_packs, registry_with
from toolrun_workflow.artifacts import DOCUMENTS
from toolrun_workflow.iterations import STAGES, IterationStore, store_for
from toolrun_workflow.stages import stage_tools

PACK_TOOLS = {
    "list_files", "run_command", "check_tests", "check_lint", "check_feature_coverage",
    "check_task_dependencies", "check_data_format", "provide_feedback", "goto_stage",
    "copy_workspace_to_project", "query_memory", "save_insight", "save_learning", "save_issue",
    "start_iteration", "get_iteration", "save_idea", "save_prd_doc", "save_design_doc",
    "save_plan_doc", "save_delivery_report", "load_idea", "load_prd_doc", "load_design_doc",
    "load_plan_doc", "load_delivery_report",
    "create_requirement", "update_requirement", "delete_requirement", "get_requirements",
    "add_feature", "update_feature_status", "create_design_component", "get_design",
    "create_task", "update_task_status", "get_plan",
}  # fmt: skip


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


# The spec's tiers: artifact, data and validation low; file medium; command and
# deployment high. check_tests and check_lint validate by running a command: high.
TIERS: dict[str, dict[str, tuple[str, str]]] = {
    "iteration": {
        "start_iteration": ("read_write", "low"),
        "get_iteration": ("read_only", "low"),
    },
    "artifact": {
        **{f"save_{key}": ("read_write", "low") for key in DOCUMENTS},
        **{f"load_{key}": ("read_only", "low") for key in DOCUMENTS},
    },
    "data": {
        **dict.fromkeys(
            (
                "create_requirement",
                "update_requirement",
                "delete_requirement",
                "add_feature",
                "update_feature_status",
                "create_design_component",
                "create_task",
                "update_task_status",
            ),
            ("read_write", "low"),
        ),
        **dict.fromkeys(("get_requirements", "get_design", "get_plan"), ("read_only", "low")),
    },
    "validation": {
        "check_feature_coverage": ("read_only", "low"),
        "check_task_dependencies": ("read_only", "low"),
        "check_data_format": ("read_only", "low"),
        "check_tests": ("execute", "high"),
        "check_lint": ("execute", "high"),
    },
    "file": {"list_files": ("read_write", "medium")},
    "command": {"run_command": ("execute", "high")},
    "interaction": {
        "provide_feedback": ("read_write", "low"),
        "goto_stage": ("read_write", "low"),
    },
    "delivery": {"copy_workspace_to_project": ("admin", "high")},
    "memory": {
        "query_memory": ("read_only", "low"),
        **{f"save_{kind}": ("read_write", "low") for kind in ("insight", "learning", "issue")},
    },
}


def test_every_tool_has_its_tiers_level_and_risk() -> None:
    pinned = {
        name: (group, *tier) for group, tools in TIERS.items() for name, tier in tools.items()
    }
    found = {}
    for tool in toolrun_workflow.tools():
        d = tool.descriptor
        group = next(tag for tag in d.tags if tag != "workflow")
        found[d.name] = (group, str(d.permission), str(d.risk))

    assert found == pinned
    assert set(found) == PACK_TOOLS


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


def test_coverage_and_dependency_checks_report_what_fails(run: Runner) -> None:
    run.ok("start_iteration", name="checks")
    covered = run.ok("create_requirement", title="A", description="a", priority="High")
    bare = run.ok("create_requirement", title="B", description="b", priority="Low")
    feature = run.ok("add_feature", title="F", description="f", requirement_ids=[covered["id"]])
    lonely = run.ok("add_feature", title="G", description="g", requirement_ids=[covered["id"]])
    first = run.ok("create_task", title="T1", description="t", feature_ids=[feature["id"]])
    second = run.ok("create_task", title="T2", description="t", depends_on=[first["id"]])
    run.ok("update_task_status", id=first["id"], status="in_progress")
    coverage = run.ok("check_feature_coverage")
    clean = run.ok("check_task_dependencies")
    # A cycle and a dangling id, written by hand as an agent's file edit would.
    tasks_file = (
        run.workspace / ".iterations" / run.ok("get_iteration")["id"] / "data" / "tasks.json"
    )
    tasks = json.loads(tasks_file.read_text())
    tasks[0]["depends_on"] = [second["id"], "task-gone"]
    tasks_file.write_text(json.dumps(tasks))
    broken = run.ok("check_task_dependencies")

    assert coverage["passed"] is False
    assert coverage["uncovered_requirements"] == [bare["id"]]
    assert coverage["features_without_tasks"] == [lonely["id"]]
    assert clean["passed"] is True
    assert broken["passed"] is False
    assert broken["dangling"] == [{"task": first["id"], "missing": ["task-gone"]}]
    # The cycle starts from the smaller (random) id: [a, b, a] or [b, a, b].
    [cycle] = broken["cycles"]
    assert (len(cycle), cycle[0], set(cycle)) == (3, cycle[-1], {first["id"], second["id"]})


def test_the_data_format_check_finds_bad_records_and_bad_files(run: Runner) -> None:
    started = run.ok("start_iteration", name="format")
    run.ok("create_requirement", title="A", description="a", priority="High")
    good = run.ok("check_data_format")
    data = run.workspace / ".iterations" / started["id"] / "data"
    records = json.loads((data / "requirements.json").read_text())
    records[0]["priority"] = "Urgent"
    del records[0]["title"]
    (data / "requirements.json").write_text(json.dumps(records))
    (data / "tasks.json").write_text("{not json")
    bad = run.ok("check_data_format")

    assert good == {
        "check": "check_data_format",
        "passed": True,
        "records": 1,
        "problems": [],
        "dangling": [],
    }
    assert bad["passed"] is False
    errors = {(p["file"], p["error"].split(":")[0]) for p in bad["problems"]}
    assert ("data/requirements.json", "priority") in errors
    assert ("data/requirements.json", "(record)") in errors  # title is missing
    assert ("data/tasks.json", "tasks.json is not valid JSON") in errors


def test_commands_run_in_the_iterations_workspace_with_pass_fail_reports(run: Runner) -> None:
    directory = run.start(test_command="test -f export.py", lint_command="false")
    before = run.ok("check_tests")
    wrote = run.ok("run_command", command="echo 'print(1)' > export.py")
    after = run.ok("check_tests")
    lint = run.ok("check_lint")
    listed = run.ok("run_command", command="ls")
    refused = run("run_command", command="curl http://example.com")

    assert wrote["exit_code"] == 0
    assert (directory / "workspace" / "export.py").read_text() == "print(1)\n"
    assert (before["passed"], after["passed"]) == (False, True)
    assert after["command"] == "test -f export.py"
    assert (lint["passed"], lint["exit_code"]) == (False, 1)
    assert listed["stdout"].split() == ["export.py"]
    assert refused.status == "blocked"  # not on the command allowlist


def test_a_check_without_a_configured_command_says_so(run: Runner) -> None:
    started = run.ok("start_iteration", name="no tests")

    result = run("check_tests")

    assert result.error == f"iteration {started['id']} has no test_command: start it with one"


def test_stages_move_with_feedback_for_the_next_one(run: Runner) -> None:
    run.ok("start_iteration", name="stages")
    run.ok("provide_feedback", message="Say who the users are.")
    moved = run.ok("goto_stage", stage="prd")
    skipped = run("goto_stage", stage="coding")

    shown = run.ok("get_iteration")["feedback"]

    assert moved["from"] == "idea"
    assert moved["stage"] == "prd"
    assert [f["message"] for f in moved["feedback"]] == ["Say who the users are."]
    assert shown == moved["feedback"]
    assert skipped.error == "cannot go from prd to coding; from prd: design, idea"


def test_memory_is_ranked_and_filtered(run: Runner) -> None:
    first = run.ok("start_iteration", name="one")
    run.ok("save_issue", text="Excel misreads UTF-8 CSV files without a BOM")
    run.ok("save_learning", text="Pin the CSV dialect in the exporter tests")
    run.ok("goto_stage", stage="prd")
    run.ok("save_insight", text="Users export fewer than a thousand rows")
    run.ok("start_iteration", name="two")

    csv = run.ok("query_memory", query="CSV dialect")
    issues = run.ok("query_memory", query="csv", kind="issue")
    prd = run.ok("query_memory", query="users rows", stage="prd", iteration=first["id"])
    nothing = run.ok("query_memory", query="kubernetes")

    assert [r["kind"] for r in csv["results"]] == ["learning", "issue"]
    assert [r["text"] for r in issues["results"]] == [
        "Excel misreads UTF-8 CSV files without a BOM"
    ]
    assert [r["kind"] for r in prd["results"]] == ["insight"]
    assert nothing["results"] == []


def test_delivery_copies_allowlisted_files_into_the_project_only(run: Runner) -> None:
    started = run.ok("start_iteration", name="deliver")
    work = run.workspace / ".iterations" / started["id"] / "workspace"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "export.py").write_text("print('csv')\n")
    (work / "README.md").write_text("# Export\n")
    (work / "tool.exe").write_bytes(b"MZ")
    (work / "escape.py").symlink_to("/etc/passwd")
    unconfirmed = run("copy_workspace_to_project", confirm=False)
    # The test's approver denies; approve these calls as an operator would.
    run.ctx.approver = AutoApprover(dangerous=True)
    outside = run("copy_workspace_to_project", confirm=True, target="../elsewhere")
    into_iteration = run("copy_workspace_to_project", confirm=True, target=".iterations/x")
    copied = run.ok("copy_workspace_to_project", confirm=True, target="src")

    assert unconfirmed.status == "error"
    assert "confirm" in (unconfirmed.error or "")
    assert outside.status == "blocked"
    assert into_iteration.status == "blocked"
    assert sorted(copied["copied"]) == ["src/README.md", "src/pkg/export.py"]
    assert sorted(copied["skipped"]) == ["escape.py", "tool.exe"]
    assert (run.workspace / "src" / "pkg" / "export.py").read_text() == "print('csv')\n"
    assert not (run.workspace / "src" / "tool.exe").exists()


def test_without_approval_delivery_does_not_run(run: Runner) -> None:
    started = run.ok("start_iteration", name="denied")
    (run.workspace / ".iterations" / started["id"] / "workspace" / "a.py").write_text("")

    result = run("copy_workspace_to_project", confirm=True)

    assert result.status == "denied"


def test_a_coding_stage_profile_cannot_save_a_prd() -> None:
    coding = stage_tools("coding")

    assert "save_prd_doc" not in coding
    assert {"run_command", "check_tests", "update_task_status", "get_iteration"} <= set(coding)
    assert set(PACK_TOOLS) - {"start_iteration"} <= {t for s in STAGES for t in stage_tools(s)} | {
        "start_iteration"
    }

"""Symbolic links planted where the pack keeps its files — a document, the temporary
name beside it, the data lock, a record file, the iteration's workspace/ — are refused:
no tool reads or writes outside the workspace through them."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from tests.workflow.runner import Runner

from toolrun.permissions.approvals import AutoApprover

OUTSIDE_TEXT = "the outside's secret\n"


@pytest.fixture
def secret(run: Runner) -> Path:
    path = run.outside / "secret.txt"
    path.write_text(OUTSIDE_TEXT)
    return path


@pytest.mark.parametrize(
    ("tool", "filename"),
    [("save_prd_doc", "prd.md"), ("save_idea", "idea.md"), ("save_delivery_report", "delivery.md")],
)
def test_a_save_does_not_write_through_a_linked_document(
    run: Runner, secret: Path, tool: str, filename: str
) -> None:
    directory = run.start()
    (directory / filename).symlink_to(secret)

    result = run(tool, content="overwritten")

    assert result.status == "blocked"
    assert result.error == (
        f"{(directory / filename).relative_to(run.workspace)} is a symbolic link: "
        "the workflow tools never follow links"
    )
    assert secret.read_text() == OUTSIDE_TEXT
    assert (directory / filename).is_symlink()


def test_a_save_ignores_a_link_planted_at_an_old_temporary_name(run: Runner, secret: Path) -> None:
    directory = run.start()
    (directory / ".prd.md.tmp").symlink_to(secret)

    saved = run.ok("save_prd_doc", content="# PRD\n")

    assert saved["characters"] == 6
    assert secret.read_text() == OUTSIDE_TEXT
    assert (directory / "prd.md").read_text() == "# PRD\n"
    assert not (directory / "prd.md").is_symlink()


def test_a_link_to_a_file_inside_the_workspace_is_refused_too(run: Runner) -> None:
    directory = run.start()
    project_file = run.workspace / "README.md"
    project_file.write_text("the project's\n")
    (directory / "prd.md").symlink_to(project_file)

    saved = run("save_prd_doc", content="replaced")
    loaded = run("load_prd_doc")

    assert (saved.status, loaded.status) == ("blocked", "blocked")
    assert project_file.read_text() == "the project's\n"


@pytest.mark.parametrize(
    ("tool", "filename"),
    [
        ("load_idea", "idea.md"),
        ("load_plan_doc", "plan.md"),
        ("get_design", "design.md"),
        ("get_plan", "plan.md"),
    ],
)
def test_loads_do_not_read_through_a_linked_document(
    run: Runner, secret: Path, tool: str, filename: str
) -> None:
    directory = run.start()
    (directory / filename).symlink_to(secret)

    result = run(tool)

    assert result.status == "blocked"
    assert OUTSIDE_TEXT not in json.dumps(result.output)
    assert "symbolic link" in (result.error or "")


def test_the_data_lock_is_never_truncated_through_a_link(run: Runner, secret: Path) -> None:
    directory = run.start()
    (directory / "data").mkdir()
    (directory / "data" / ".lock").symlink_to(secret)

    result = run("create_requirement", title="A", description="a", priority="High")

    assert result.status == "blocked"
    assert "data/.lock is a symbolic link" in (result.error or "")
    assert secret.read_text() == OUTSIDE_TEXT


@pytest.mark.parametrize(
    "call",
    [
        ("get_requirements", {}),
        ("create_requirement", {"title": "A", "description": "a", "priority": "High"}),
        ("check_data_format", {}),
        ("check_feature_coverage", {}),
    ],
)
def test_a_linked_record_file_is_neither_read_nor_written(
    run: Runner, call: tuple[str, dict[str, str]]
) -> None:
    outside = run.outside / "requirements.json"
    planted = [{"id": "req-secret", "title": "outside"}]
    outside.write_text(json.dumps(planted))
    directory = run.start()
    (directory / "data").mkdir()
    (directory / "data" / "requirements.json").symlink_to(outside)

    result = run(call[0], **call[1])

    assert result.status == "blocked"
    assert "req-secret" not in json.dumps(result.output)
    assert json.loads(outside.read_text()) == planted


def test_a_linked_data_directory_is_refused(run: Runner, secret: Path) -> None:
    directory = run.start()
    (directory / "data").symlink_to(run.outside)

    result = run("provide_feedback", message="hello")

    assert result.status == "blocked"
    assert not (run.outside / "feedback.json").exists()


def test_a_linked_iterations_directory_is_refused(run: Runner) -> None:
    run.start()
    (run.workspace / ".iterations").rename(run.outside / "moved")
    (run.workspace / ".iterations").symlink_to(run.outside / "moved")

    result = run("save_idea", content="x")

    assert result.status == "blocked"
    assert result.error == (".iterations is a symbolic link: the workflow tools never follow links")


@pytest.mark.parametrize(
    "call",
    [
        ("run_command", {"command": "ls"}),
        ("list_files", {"below": "workspace"}),
        ("copy_workspace_to_project", {"confirm": True}),
    ],
)
def test_a_linked_workspace_directory_is_refused(
    run: Runner, call: tuple[str, dict[str, object]]
) -> None:
    directory = run.start()
    (directory / "workspace").rmdir()
    stolen = run.outside / "stolen"
    stolen.mkdir()
    (stolen / "keys.py").write_text("KEY = 1\n")
    (directory / "workspace").symlink_to(stolen)
    run.ctx.approver = AutoApprover(dangerous=True)

    result = run(call[0], **call[1])

    assert result.status == "blocked"
    assert "workspace is a symbolic link" in (result.error or "")
    assert not (run.workspace / "keys.py").exists()


def test_concurrent_saves_never_collide_on_a_temporary_file(run: Runner) -> None:
    directory = run.start()
    contents = [f"# draft {i}\n" * 200 for i in range(8)]
    results: list[str] = []

    def save(content: str) -> None:
        for _ in range(10):
            results.append(run("save_prd_doc", content=content).status)

    threads = [threading.Thread(target=save, args=(c,)) for c in contents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert results == ["success"] * 80
    assert (directory / "prd.md").read_text() in contents
    assert [p.name for p in directory.iterdir() if p.name.startswith(".")] == []

"""The validation checks on hand-edited data: malformed records are reported, never a
crash; references to ids that do not exist are found for every kind of record; a long
chain of tasks does not exhaust the stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.workflow.runner import Runner

from toolrun_workflow.checks import cycles

CHECKS = ("check_feature_coverage", "check_task_dependencies", "check_data_format")


def edit(directory: Path, file: str, change: Any) -> None:
    """Change a record file by hand, as an agent's file edit would."""
    path = directory / "data" / file
    records = json.loads(path.read_text()) if path.exists() else []
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(change(records)))


@pytest.fixture
def planned(run: Runner) -> dict[str, Any]:
    """An iteration with a requirement, a feature, a component and two tasks."""
    directory = run.start()
    requirement = run.ok("create_requirement", title="A", description="a", priority="High")
    feature = run.ok("add_feature", title="F", description="f", requirement_ids=[requirement["id"]])
    component = run.ok(
        "create_design_component", name="C", description="c", feature_ids=[feature["id"]]
    )
    first = run.ok("create_task", title="T1", description="t", feature_ids=[feature["id"]])
    second = run.ok(
        "create_task",
        title="T2",
        description="t",
        feature_ids=[feature["id"]],
        depends_on=[first["id"]],
    )
    for check in CHECKS:
        assert run.ok(check)["passed"] is True, check
    return {
        "directory": directory,
        "requirement": requirement,
        "feature": feature,
        "component": component,
        "tasks": [first, second],
    }


def _without_id(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    del records[0]["id"]
    return records


@pytest.mark.parametrize(
    ("file", "change", "error"),
    [
        ("tasks.json", _without_id, "(record): 'id' is a required property"),
        (
            "tasks.json",
            lambda r: [{**r[0], "depends_on": [["x"]]}, *r[1:]],
            "depends_on/0: ['x'] is not of type 'string'",
        ),
        (
            "tasks.json",
            lambda r: [{**r[0], "depends_on": 5}, *r[1:]],
            "depends_on: 5 is not of type 'array'",
        ),
        ("features.json", _without_id, "(record): 'id' is a required property"),
        (
            "features.json",
            lambda r: [{**r[0], "requirement_ids": "req-1"}],
            "requirement_ids: 'req-1' is not of type 'array'",
        ),
        ("requirements.json", _without_id, "(record): 'id' is a required property"),
        (
            "components.json",
            lambda r: [{**r[0], "feature_ids": [7]}],
            "feature_ids/0: 7 is not of type 'string'",
        ),
    ],
)
def test_malformed_records_are_reported_by_every_check(
    run: Runner, planned: dict[str, Any], file: str, change: Any, error: str
) -> None:
    edit(planned["directory"], file, change)

    reports = {check: run(check) for check in CHECKS}

    for check, result in reports.items():
        assert result.status == "success", (check, result.error)
        if check == "check_task_dependencies" and file not in {"tasks.json", "features.json"}:
            assert result.output["passed"] is True  # it does not read that file
            continue
        problems = result.output["problems" if check == "check_data_format" else "malformed"]
        assert result.output["passed"] is False, check
        assert error in [p["error"] for p in problems], (check, problems)
        assert {p["file"] for p in problems} == {f"data/{file}"}


def test_tools_that_change_records_report_malformed_ones_instead_of_crashing(
    run: Runner, planned: dict[str, Any]
) -> None:
    directory = planned["directory"]
    edit(directory, "tasks.json", _without_id)
    created = run("create_task", title="T3", description="t", depends_on=[])
    edit(directory, "tasks.json", lambda r: [{**r[0], "id": "task-bad", "depends_on": 5}])
    updated = run("update_task_status", id="task-bad", status="done")
    edit(directory, "features.json", lambda r: [{**r[0], "requirement_ids": [["x"]]}])
    deleted = run("delete_requirement", id=planned["requirement"]["id"])

    assert created.status == "success", created.error
    assert updated.status == "error"
    assert updated.error == (
        "task 'task-bad' in data/tasks.json is malformed (depends_on: 5 is not of type "
        "'array'): fix the file (check_data_format lists every problem)"
    )
    assert deleted.status == "success", deleted.error  # the malformed feature names nothing


def test_a_file_that_is_not_a_list_of_objects_is_reported(
    run: Runner, planned: dict[str, Any]
) -> None:
    (planned["directory"] / "data" / "features.json").write_text('[1, "two"]')

    coverage = run.ok("check_feature_coverage")

    assert coverage["passed"] is False
    assert coverage["malformed"] == [
        {
            "file": "data/features.json",
            "record": None,
            "error": "features.json must hold a JSON list of objects",
        }
    ]


def test_dangling_references_are_reported_for_every_kind(
    run: Runner, planned: dict[str, Any]
) -> None:
    directory = planned["directory"]
    feature, component = planned["feature"], planned["component"]
    edit(directory, "features.json", lambda r: [{**r[0], "requirement_ids": ["req-gone"]}])
    edit(directory, "components.json", lambda r: [{**r[0], "feature_ids": ["feat-gone"]}])

    coverage = run.ok("check_feature_coverage")
    data = run.ok("check_data_format")

    expected = [
        {
            "kind": "feature",
            "id": feature["id"],
            "field": "requirement_ids",
            "missing": ["req-gone"],
        },
        {
            "kind": "component",
            "id": component["id"],
            "field": "feature_ids",
            "missing": ["feat-gone"],
        },
    ]
    assert coverage["passed"] is False
    assert coverage["dangling"] == expected
    assert data["passed"] is False
    assert data["problems"] == []
    assert data["dangling"] == expected


def test_feedback_without_a_stage_does_not_break_get_iteration(run: Runner) -> None:
    directory = run.start()
    run.ok("provide_feedback", message="kept", for_stage="idea")
    edit(directory, "feedback.json", lambda r: [*r, {"message": "no stage"}])

    shown = run.ok("get_iteration")["feedback"]

    assert [f["message"] for f in shown] == ["kept"]


def test_a_chain_of_thousands_of_tasks_is_checked_without_recursion(run: Runner) -> None:
    directory = run.start()
    chain = [
        {
            "id": f"task-{i:05d}",
            "title": "t",
            "description": "t",
            "feature_ids": [],
            "depends_on": [f"task-{i - 1:05d}"] if i else ["task-02999"],
            "status": "todo",
            "created_at": 0.0,
            "updated_at": 0.0,
        }
        for i in range(3000)
    ]
    edit(directory, "tasks.json", lambda _: chain)

    report = run.ok("check_task_dependencies")

    assert report["passed"] is False
    assert report["tasks"] == 3000
    assert len(report["cycles"]) == 1
    assert len(report["cycles"][0]) == 3001


def test_cycles_are_found_once_each() -> None:
    graph = {"a": ["b"], "b": ["c", "a"], "c": ["a"], "d": ["d"], "e": []}

    assert cycles(graph) == [["a", "b", "c", "a"], ["a", "b", "a"], ["d", "d"]]

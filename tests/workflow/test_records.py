"""Records keep their references whole: a record still named by another is not deleted,
and the ids of what names it are given."""

from __future__ import annotations

from tests.workflow.runner import Runner


def test_a_requirement_a_feature_names_is_not_deleted(run: Runner) -> None:
    run.start()
    requirement = run.ok("create_requirement", title="A", description="a", priority="High")
    first = run.ok("add_feature", title="F", description="f", requirement_ids=[requirement["id"]])
    second = run.ok("add_feature", title="G", description="g", requirement_ids=[requirement["id"]])

    refused = run("delete_requirement", id=requirement["id"])
    coverage = run.ok("check_feature_coverage")

    assert refused.status == "error"
    assert refused.error == (
        f"requirement {requirement['id']} is still named by feature {first['id']}, "
        f"feature {second['id']}: change or delete those first"
    )
    assert [r["id"] for r in run.ok("get_requirements")["requirements"]] == [requirement["id"]]
    assert coverage["dangling"] == []


def test_a_requirement_no_one_names_is_deleted(run: Runner) -> None:
    run.start()
    kept = run.ok("create_requirement", title="A", description="a", priority="High")
    dropped = run.ok("create_requirement", title="B", description="b", priority="Low")
    run.ok("add_feature", title="F", description="f", requirement_ids=[kept["id"]])

    deleted = run.ok("delete_requirement", id=dropped["id"])

    assert deleted == {"deleted": dropped["id"]}
    assert [r["id"] for r in run.ok("get_requirements")["requirements"]] == [kept["id"]]


def test_a_component_must_name_existing_features(run: Runner) -> None:
    run.start()

    result = run("create_design_component", name="C", description="c", feature_ids=["feat-x"])

    assert result.error == "feature_ids names no existing feature: feat-x"

"""The workflow toolpack on a real platform of its own (API, a worker per level, the
DAG scheduler, its own Redis database) with TOOLRUN_TOOL_PACKS=["workflow"]: every tool
through the API, stage scoping by agent profile, delivery behind an approval, and the
example pipeline plan."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from tests.integration.platform import Platform, other_database, running
from tests.integration.test_dag_examples import EXAMPLES
from tests.integration.test_dags import finished, nodes, submit
from toolrun.dag import load_plan
from toolrun.permissions.levels import PermissionLevel
from toolrun_workflow.stages import stage_tools


@pytest.fixture(scope="module")
def pack_platform(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    url = other_database(redis_url, 2)
    redis.Redis.from_url(url).flushdb()
    root = tmp_path_factory.mktemp("workflow")
    workspace = root / "workspace"
    workspace.mkdir()
    setup = Platform(
        url,
        workspace,
        root / "logs",
        extra_env={"TOOLRUN_TOOL_PACKS": '["workflow"]', "TOOLRUN_AUTO_APPROVE": "true"},
        scheduler=True,
    )
    with running(setup) as started:
        yield started


@pytest.fixture
def api(pack_platform: Platform) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=pack_platform.base_url, headers=pack_platform.headers, timeout=60
    ) as client:
        yield client


def call(api: httpx.Client, tool: str, **arguments: Any) -> dict[str, Any]:
    response = api.post(
        "/v1/calls", params={"wait": 60}, json={"tool_name": tool, "arguments": arguments}
    )
    assert response.status_code in (200, 202), response.text  # 202: parked for approval
    result: dict[str, Any] = response.json()
    return result


def ok(api: httpx.Client, tool: str, **arguments: Any) -> Any:
    result = call(api, tool, **arguments)
    assert result["status"] == "success", result
    return result["output"]


def test_every_tool_runs_through_the_api_on_its_levels_worker(api: httpx.Client) -> None:
    descriptors = {d["name"]: d for d in api.get("/v1/tools").json()}
    started = ok(api, "start_iteration", name="all tools", test_command="true", lint_command="true")
    ran: dict[str, dict[str, Any]] = {}

    def run(tool: str, **arguments: Any) -> Any:
        result = call(api, tool, **arguments)
        assert result["status"] == "success", result
        ran[tool] = result
        return result["output"]

    run("get_iteration")
    for key in ("idea", "prd_doc", "design_doc", "plan_doc", "delivery_report"):
        run(f"save_{key}", content=f"# {key}\n")
    for key in ("idea", "prd_doc", "design_doc", "plan_doc", "delivery_report"):
        assert run(f"load_{key}")["content"] == f"# {key}\n"
    req = run("create_requirement", title="A", description="a", priority="Medium")
    extra = ok(api, "create_requirement", title="B", description="b", priority="Low")
    run("update_requirement", id=req["id"], status="approved")
    run("delete_requirement", id=extra["id"])
    assert [r["id"] for r in run("get_requirements")["requirements"]] == [req["id"]]
    feature = run("add_feature", title="F", description="f", requirement_ids=[req["id"]])
    run("update_feature_status", id=feature["id"], status="in_progress")
    run("create_design_component", name="C", description="c", feature_ids=[feature["id"]])
    assert len(run("get_design")["components"]) == 1
    task = run("create_task", title="T", description="t", feature_ids=[feature["id"]])
    run("update_task_status", id=task["id"], status="done")
    assert run("get_plan")["tasks"][0]["status"] == "done"
    for check in ("check_feature_coverage", "check_task_dependencies", "check_data_format"):
        assert run(check)["passed"] is True
    assert run("check_tests")["passed"] is True
    assert run("check_lint")["passed"] is True
    # Commands run in the iteration's workspace/, the documents one level up.
    assert run("run_command", command="echo 'x = 1' > main.py && ls")["stdout"].split() == [
        "main.py"
    ]
    listed = {f["path"] for f in run("list_files")["files"]}
    assert {"prd.md", "workspace/main.py"} <= listed
    run("provide_feedback", message="fine")
    run("goto_stage", stage="prd")
    for kind in ("insight", "learning", "issue"):
        run(f"save_{kind}", text=f"an {kind} about exports")
    assert len(run("query_memory", query="exports")["results"]) == 3

    pack = {name for name, d in descriptors.items() if d["category"] == "workflow"}
    assert pack - set(ran) == {"start_iteration", "copy_workspace_to_project"}
    for tool, result in ran.items():
        level = descriptors[tool]["permission"]
        assert result["metadata"]["worker"].startswith(f"{level}@"), (tool, result["metadata"])
    assert started["directory"] == f".iterations/{started['id']}"


def test_a_stage_agent_may_call_only_its_stages_tools(
    api: httpx.Client, pack_platform: Platform
) -> None:
    started = ok(api, "start_iteration", name="scoping")
    ok(api, "save_prd_doc", content="# PRD\n")
    prd = pack_platform.workspace / started["directory"] / "prd.md"
    token = pack_platform.agent(
        f"coder-{uuid.uuid4().hex[:6]}", PermissionLevel.EXECUTE, tools=stage_tools("coding")
    )
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=pack_platform.base_url, headers=headers, timeout=60) as coder:
        listed = {tool["name"] for tool in coder.get("/v1/tools").json()}
        refused = call(coder, "save_prd_doc", content="# not mine")
        allowed = call(coder, "get_iteration")
        # Nor through a command: workspace/ is the command's sandbox, prd.md is above it.
        redirected = call(coder, "run_command", command="echo mine > ../prd.md")
        absolute = call(coder, "run_command", command=f"echo mine > {prd}")
        moved = call(coder, "run_command", command="cd .. && echo mine > prd.md")

    assert "save_prd_doc" not in listed
    assert "run_command" in listed
    assert refused["status"] == "blocked"
    assert "not in the tool set" in refused["error"]
    assert allowed["status"] == "success"
    assert (redirected["status"], absolute["status"]) == ("blocked", "blocked")
    assert moved["status"] == "awaiting_approval"  # high risk: an operator decides
    assert moved["metadata"]["policy"] == "dangerous"
    assert prd.read_text() == "# PRD\n"
    api.post(f"/v1/calls/{moved['call_id']}/deny", json={"reason": "not this stage's"})


def test_delivery_waits_for_an_operator_and_stays_in_the_project(
    api: httpx.Client, pack_platform: Platform
) -> None:
    started = ok(api, "start_iteration", name="deliver")
    work = pack_platform.workspace / started["directory"] / "workspace"
    work.mkdir(parents=True, exist_ok=True)
    (work / "export.py").write_text("print('csv')\n")
    (work / "secret.key").write_text("no")
    parked = call(api, "copy_workspace_to_project", confirm=True, target="delivered")
    assert not (pack_platform.workspace / "delivered").exists()
    approved = api.post(f"/v1/calls/{parked['call_id']}/approve", json={"reason": "ship it"})
    final = api.get(f"/v1/calls/{parked['call_id']}", params={"wait": 60}).json()
    escape = call(api, "copy_workspace_to_project", confirm=True, target="../outside")
    api.post(f"/v1/calls/{escape['call_id']}/approve", json={"reason": "try it"})
    escaped = api.get(f"/v1/calls/{escape['call_id']}", params={"wait": 60}).json()

    assert parked["status"] == "awaiting_approval"
    assert parked["metadata"]["policy"] == "dangerous"
    assert approved.status_code == 202
    assert final["status"] == "success", final
    assert final["output"]["copied"] == ["delivered/export.py"]
    assert final["output"]["skipped"] == ["secret.key"]
    assert (pack_platform.workspace / "delivered" / "export.py").read_text() == "print('csv')\n"
    assert escaped["status"] == "blocked"
    assert not (pack_platform.workspace.parent / "outside").exists()


def test_the_example_pipeline_plan_runs_end_to_end(
    api: httpx.Client, pack_platform: Platform
) -> None:
    name = "workflow-pipeline.yaml"
    plan = load_plan((EXAMPLES / name).read_text(), name=name)

    view = finished(api, submit(api, plan.model_dump(mode="json", exclude_none=True)))

    assert view["status"] == "succeeded", view
    found = nodes(view)
    assert found["coverage"]["output"]["passed"] is True
    assert found["dependencies"]["output"]["passed"] is True
    assert found["tests"]["output"]["passed"] is True
    assert found["to_delivery"]["output"]["stage"] == "delivery"
    iteration = found["start"]["output"]["directory"]
    report = pack_platform.workspace / iteration / "delivery.md"
    assert report.read_text().startswith("# Delivery")
    assert len(found) == 22
    assert (pack_platform.workspace / iteration / "workspace" / "export.py").exists()

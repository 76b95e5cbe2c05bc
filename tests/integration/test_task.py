"""The task tool through the API: a delegation worker runs the sub-agent's loop against a
scripted model; each of its calls goes through the platform (checks, approvals, workers of
its level, history linked to the task call)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.platform import Platform, wait_for
from tests.scripted_model import ScriptedModel, answer, tool_calls
from toolrun.permissions.levels import PermissionLevel
from toolrun.subagents.definition import parse_markdown


def client_for(platform: Platform, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=platform.base_url, timeout=90, headers=headers)


def submit_task(api: httpx.Client, agent: str, wait: float = 60) -> dict[str, Any]:
    body = {"tool_name": "task", "arguments": {"agent": agent, "prompt": "Find ROOT."}}
    response = api.post("/v1/calls", params={"wait": wait}, json=body)
    assert response.status_code in (200, 202), response.text
    result: dict[str, Any] = response.json()
    return result


def history_of(api: httpx.Client, task_call: str, count: int) -> list[dict[str, Any]]:
    """The history rows of a task call's sub-agent calls, once there are `count` (workers
    write them in batches)."""
    rows: list[dict[str, Any]] = []

    def written() -> bool:
        response = api.get("/v1/history", params={"parent": task_call})
        rows[:] = sorted(response.json()["rows"], key=lambda row: row["tool_name"])
        return len(rows) >= count

    wait_for(written, 30, f"{count} history rows of {task_call}")
    return rows


@pytest.fixture
def names() -> str:
    return uuid.uuid4().hex[:8]


def test_a_read_only_agent_delegates_to_a_sub_agent_that_can_search_but_never_write(
    platform: Platform, api: httpx.Client, model: ScriptedModel, names: str
) -> None:
    (platform.workspace / "settings.py").write_text("ROOT = '/srv/app'\n")
    searcher = f"searcher-{names}"
    definition = {
        "name": searcher,
        "description": "Finds things.",
        "prompt": "You search the code.",
        "tools": ["grep", "read", "write"],
        "ceiling": "read_write",
    }
    assert api.put(f"/v1/subagents/{searcher}", json=definition).status_code == 201
    token = platform.agent(f"parent-{names}", PermissionLevel.READ_ONLY)
    model.script(
        tool_calls(
            ("grep", {"pattern": "ROOT ="}),
            ("write", {"file_path": f"pwned-{names}.txt", "content": "x"}),
        ),
        answer("settings.py:1 sets ROOT."),
    )

    with client_for(platform, token) as parent:
        task = submit_task(parent, searcher)
        me = parent.get("/v1/agents/me").json()
        rows = history_of(parent, task["call_id"], 2)

    assert task["status"] == "success", task
    assert task["output"]["answer"] == "settings.py:1 sets ROOT."
    assert task["metadata"]["worker"].startswith("delegation@")
    # The parent's read_only ceiling wins over the sub-agent's read_write: write is hidden.
    assert model.offered_tools() == ["grep", "read"]
    assert not (platform.workspace / f"pwned-{names}.txt").exists()
    assert "settings.py" in model.requests[1]["messages"][-2]["content"]
    assert [(row["tool_name"], row["status"]) for row in rows] == [
        ("grep", "success"),
        ("write", "blocked"),
    ]
    for row in rows:
        assert (row["agent_id"], row["subagent"]) == (me["id"], searcher)
        assert row["parent_call_id"] == task["call_id"]
    assert rows[0]["worker"].startswith("read_only@")
    shown = platform.cli("history", "--parent", task["call_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    assert sorted(row["tool_name"] for row in json.loads(shown.stdout)) == ["grep", "write"]


def test_a_workspace_sub_agent_s_dangerous_call_waits_for_an_operator(
    platform: Platform, api: httpx.Client, model: ScriptedModel, names: str
) -> None:
    cleaner = f"cleaner-{names}"
    folder = platform.workspace / ".toolrun" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{cleaner}.md").write_text(
        f"---\nname: {cleaner}\ndescription: Cleans up.\ntools: [bash]\nceiling: execute\n"
        "---\nYou remove build output.\n"
    )
    victim = platform.workspace / f"build-{names}"
    victim.mkdir()
    token = platform.agent(f"builder-{names}", PermissionLevel.EXECUTE)
    model.script(
        tool_calls(("bash", {"command": f"rm -rf build-{names}"})),
        answer("removed"),
    )

    with client_for(platform, token) as parent:
        task = submit_task(parent, cleaner, wait=0)
        parked = wait_for_parked(api, f"builder-{names}/{cleaner}")
        approved = api.post(f"/v1/calls/{parked['call_id']}/approve")
        ended = parent.get(f"/v1/calls/{task['call_id']}", params={"wait": 60}).json()
        rows = history_of(parent, task["call_id"], 1)

    assert approved.status_code == 202, approved.text
    assert ended["status"] == "success", ended
    assert ended["output"]["answer"] == "removed"
    assert not victim.exists()
    [row] = rows
    assert (row["tool_name"], row["status"], row["subagent"]) == ("bash", "success", cleaner)
    assert row["approved_by"] == "admin"
    assert row["worker"].startswith("execute@")


def wait_for_parked(api: httpx.Client, agent_name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def parked() -> bool:
        pending = api.get("/v1/approvals", params={"status": "pending"}).json()
        found[:] = [a for a in pending if a["agent_name"] == agent_name]
        return bool(found)

    wait_for(parked, 60, f"a parked call of {agent_name}")
    return found[0]


def test_the_sub_agent_s_calls_stop_with_the_task_s_time(
    platform: Platform, api: httpx.Client, model: ScriptedModel, names: str
) -> None:
    """A parked call nobody approves is cancelled when the task runs out of time."""
    waiter = f"waiter-{names}"
    definition = {
        "name": waiter,
        "description": "Waits.",
        "prompt": "p",
        "tools": ["bash"],
        "ceiling": "execute",
    }
    assert api.put(f"/v1/subagents/{waiter}", json=definition).status_code == 201
    model.script(tool_calls(("bash", {"command": "rm -rf nothing-here"})), answer("late"))
    body = {"tool_name": "task", "arguments": {"agent": waiter, "prompt": "p", "timeout": 2}}

    task = api.post("/v1/calls", params={"wait": 60}, json=body).json()
    [row] = history_of(api, task["call_id"], 1)

    assert task["status"] == "timeout", task
    assert task["output"]["stop_reason"] == "failed"
    assert row["status"] == "cancelled"
    assert row["error"] == "the Task call that made this call ran out of time"
    pending = api.get("/v1/approvals", params={"status": "pending"}).json()
    assert row["call_id"] not in {a["call_id"] for a in pending}


def test_sub_agents_are_registered_listed_and_removed_by_admins_only(
    platform: Platform, api: httpx.Client, names: str
) -> None:
    name = f"reader-{names}"
    good = {"name": name, "description": "d", "prompt": "p"}
    token = platform.agent(f"plain-{names}", PermissionLevel.ADMIN)

    with client_for(platform, token) as plain:
        refused = plain.put(f"/v1/subagents/{name}", json=good)
    created = api.put(f"/v1/subagents/{name}", json=good)
    replaced = api.put(f"/v1/subagents/{name}", json={**good, "prompt": "q"})
    mismatch = api.put(f"/v1/subagents/{name}", json={**good, "name": "other"})
    invalid = api.put(f"/v1/subagents/{name}", json={**good, "ceiling": "root"})
    listed = {entry["name"]: entry for entry in api.get("/v1/subagents").json()}
    shown = api.get(f"/v1/subagents/{name}").json()
    removed = api.delete(f"/v1/subagents/{name}")
    again = api.delete(f"/v1/subagents/{name}")
    gone = api.get(f"/v1/subagents/{name}")

    assert refused.status_code == 403
    assert (created.status_code, replaced.status_code) == (201, 200)
    assert mismatch.status_code == 422
    assert "named 'other', not" in mismatch.json()["detail"]
    assert invalid.status_code == 422
    assert listed[name]["source"] == "registered"
    assert listed[name]["ceiling"] == "read_only"
    assert shown["prompt"] == "q"
    assert (removed.status_code, again.status_code, gone.status_code) == (204, 404, 404)


def test_the_cli_registers_a_markdown_definition(
    platform: Platform, names: str, tmp_path: Path
) -> None:
    name = f"cli-{names}"
    file = tmp_path / "agent.md"
    file.write_text(f"---\nname: {name}\ndescription: From a file.\ntools: grep\n---\nSearch.\n")
    broken = tmp_path / "broken.md"
    broken.write_text("no front matter\n")

    registered = platform.cli("subagents", "register", str(file))
    listed = platform.cli("subagents", "list", "--json")
    shown = platform.cli("subagents", "show", name)
    bad = platform.cli("subagents", "register", str(broken))
    removed = platform.cli("subagents", "remove", name)
    unknown = platform.cli("subagents", "show", name)

    assert registered.returncode == 0, registered.stderr
    assert f"registered sub-agent {name}" in registered.stdout
    assert name in {entry["name"] for entry in json.loads(listed.stdout)}
    assert shown.returncode == 0, shown.stderr
    assert parse_markdown(shown.stdout, "shown") == parse_markdown(file.read_text(), "file")
    assert bad.returncode == 2
    assert "starts with YAML front matter" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert removed.returncode == 0
    assert unknown.returncode != 0
    assert f"no sub-agent named '{name}'" in unknown.stderr


def test_a_sub_agent_without_tools_is_offered_none(
    platform: Platform, api: httpx.Client, model: ScriptedModel, names: str
) -> None:
    quick = f"quick-{names}"
    body = {"name": quick, "description": "d", "prompt": "p", "tools": []}
    assert api.put(f"/v1/subagents/{quick}", json=body).status_code == 201
    model.script(answer("hi"))

    task = submit_task(api, quick)

    assert task["status"] == "success", task
    assert (task["output"]["answer"], task["output"]["tools"]) == ("hi", [])
    assert "tools" not in model.requests[0]

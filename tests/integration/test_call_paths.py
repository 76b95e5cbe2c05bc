"""One lifecycle for every path a call takes: the same call made over HTTP, by a DAG node
and by a sub-agent is decided, recorded, counted and logged alike. Each test once failed
on some path while the others passed (two copies of admission had drifted apart)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.integration.platform import Platform, wait_for
from tests.integration.test_dags import finished, nodes, submit
from tests.integration.test_metrics import calls, scrape
from tests.integration.test_task import client_for, submit_task
from tests.scripted_model import ScriptedModel, answer, tool_calls
from toolrun.permissions.levels import PermissionLevel


@dataclass
class Caller:
    """An agent of its own for one test, able to call `tool` on all three paths."""

    name: str
    client: httpx.Client
    sub_agent: str
    model: ScriptedModel
    tag: str

    def over_http(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {"tool_name": tool, "arguments": arguments}
        response = self.client.post("/v1/calls", params={"wait": 30}, json=body)
        assert response.status_code in (200, 202), response.text
        result: dict[str, Any] = response.json()
        return result

    def by_a_node(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The node's view once its run has ended."""
        run_id = submit(self.client, {"nodes": [{"id": "n", "tool": tool, "arguments": arguments}]})
        return nodes(finished(self.client, run_id, timeout_s=30))["n"]

    def by_a_sub_agent(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The task call's result; the sub-agent makes the one call, then answers."""
        self.model.script(tool_calls((tool, arguments)), answer("done"))
        return submit_task(self.client, self.sub_agent, wait=60)


@pytest.fixture
def caller(dag_platform: Platform, api: httpx.Client, model: ScriptedModel) -> Iterator[Caller]:
    tag = uuid.uuid4().hex[:8]
    name = f"paths-{tag}"
    sub_agent = f"helper-{tag}"
    definition = {
        "name": sub_agent,
        "description": "Runs one call.",
        "prompt": "Do as asked.",
        "tools": ["guarded", "bash"],
        "ceiling": "execute",
    }
    assert api.put(f"/v1/subagents/{sub_agent}", json=definition).status_code == 201
    token = dag_platform.agent(name, PermissionLevel.EXECUTE)
    with client_for(dag_platform, token) as client:
        yield Caller(name, client, sub_agent, model, tag)


def test_a_rule_on_a_defaulted_argument_covers_the_call_on_every_path(
    dag_platform: Platform, api: httpx.Client, caller: Caller
) -> None:
    """`guarded` is high risk (never auto-approved); the rule names its `mode` argument,
    which none of the calls gives: it matches the schema's default."""
    rule = api.post(
        "/v1/approval-rules",
        json={"tool_name": "guarded", "agent_name": caller.name, "arguments": {"mode": "careful"}},
    )
    assert rule.status_code == 201, rule.text
    markers = {path: f"{path}-{caller.tag}.txt" for path in ("http", "node", "sub")}

    direct = caller.over_http("guarded", {"marker": markers["http"]})
    node = caller.by_a_node("guarded", {"marker": markers["node"]})
    task = caller.by_a_sub_agent("guarded", {"marker": markers["sub"]})

    assert direct["status"] == "success", direct
    assert direct["metadata"]["approved_by"] == f"rule {rule.json()['id']}"
    assert node["state"] == "succeeded", node
    assert task["status"] == "success", task
    for marker in markers.values():
        assert (dag_platform.workspace / marker).read_text() == "careful"
    pending = api.get("/v1/approvals", params={"status": "pending"}).json()
    assert not [item for item in pending if item["agent_name"] == caller.name]


def test_a_blocked_call_is_counted_and_logged_on_every_path(
    dag_platform: Platform, api: httpx.Client, caller: Caller
) -> None:
    """`nc` is off the command allowlist: the call ends as blocked before it is queued."""
    before = calls(scrape(api), "bash", "blocked")
    command = {"command": f"nc -l 127.0.0.1 {caller.tag}"}

    direct = caller.over_http("bash", command)
    node = caller.by_a_node("bash", command)
    task = caller.by_a_sub_agent("bash", command)

    assert direct["status"] == "blocked", direct
    assert node["state"] == "failed", node
    assert "blocked" in node["error"], node
    assert task["status"] == "success", task  # the sub-agent was told, then answered
    wait_for(lambda: calls(scrape(api), "bash", "blocked") == before + 3, 10, "3 blocked counted")
    events = api.get("/v1/security-events", params={"kind": "blocked_call", "limit": 1000}).json()
    mine = [e for e in events if e["agent_id"] == direct["metadata"]["agent_id"]]
    assert len(mine) == 3, mine
    assert {e["tool_name"] for e in mine} == {"bash"}

    def recorded() -> set[str]:
        rows = api.get("/v1/history", params={"tool": "bash", "agent": caller.name}).json()
        return {row["call_id"] for row in rows["rows"] if row["status"] == "blocked"}

    wait_for(lambda: recorded() == {e["call_id"] for e in mine}, 10, "3 blocked history rows")


def test_a_parked_call_is_in_the_inbox_and_awaits_approval_on_every_path(
    dag_platform: Platform, api: httpx.Client, caller: Caller
) -> None:
    """No rule: each path parks the call, recorded as awaiting approval with an inbox
    entry naming the agent, and a denial ends it on each path."""
    markers = [f"parked-{path}-{caller.tag}.txt" for path in ("http", "node")]

    body = {"tool_name": "guarded", "arguments": {"marker": markers[0]}}
    # A parked call is answered at once, whatever `wait` asks: there is nothing to wait for.
    direct = caller.client.post("/v1/calls", params={"wait": 120}, json=body, timeout=30).json()
    run_id = submit(
        caller.client,
        {"nodes": [{"id": "n", "tool": "guarded", "arguments": {"marker": markers[1]}}]},
    )

    def parked() -> list[dict[str, Any]]:
        pending = api.get("/v1/approvals", params={"status": "pending"}).json()
        return [item for item in pending if item["agent_name"] == caller.name]

    wait_for(lambda: len(parked()) == 2, 30, "both calls in the inbox")
    assert direct["status"] == "awaiting_approval", direct
    for item in parked():
        record = api.get(f"/v1/calls/{item['call_id']}").json()
        assert record["status"] == "awaiting_approval", record
        assert (item["policy"], item["risk"]) == ("dangerous", "high")
        assert api.post(f"/v1/calls/{item['call_id']}/deny").status_code == 200
    assert nodes(finished(caller.client, run_id, timeout_s=30))["n"]["state"] == "failed"
    assert api.get(f"/v1/calls/{direct['call_id']}").json()["status"] == "denied"
    for marker in markers:
        assert not (dag_platform.workspace / marker).exists()

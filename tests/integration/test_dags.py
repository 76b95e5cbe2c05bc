"""DAG plans on the real platform: API, workers and scheduler processes on a real Redis."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import update
from sqlmodel import Session, col, select

from tests.integration.platform import Platform, wait_for
from toolrun.calls.store import CallStore
from toolrun.database import open_database
from toolrun.history import CallRecord
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Policy, Risk, Verdict
from toolrun.scheduler.store import DagNodeRecord
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus

RUN_TIMEOUT_S = 60.0


def submit(api: httpx.Client, plan: dict[str, Any]) -> str:
    response = api.post("/v1/dags", json={"plan": plan})
    assert response.status_code == 201, response.text
    run_id: str = response.json()["id"]
    return run_id


def finished(api: httpx.Client, run_id: str, timeout_s: float = RUN_TIMEOUT_S) -> dict[str, Any]:
    """The run's view once it has ended."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        view: dict[str, Any] = api.get(f"/v1/dags/{run_id}").json()
        if view["status"] != "running":
            return view
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} still running after {timeout_s} s: {view}")


def nodes(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["id"]: node for node in view["nodes"]}


def states(view: dict[str, Any]) -> dict[str, str]:
    return {node["id"]: node["state"] for node in view["nodes"]}


def history_rows(platform: Platform, run_id: str, count: int) -> list[CallRecord]:
    """The history rows of the run's calls, once there are `count` (workers write them in
    batches, a moment after the results)."""
    engine = open_database(platform.settings.database)
    query = select(CallRecord).where(col(CallRecord.call_id).startswith(f"dag:{run_id}:"))
    deadline = time.monotonic() + 10
    try:
        while True:
            with Session(engine) as session:
                rows = list(session.exec(query).all())
            if len(rows) >= count or time.monotonic() > deadline:
                return sorted(rows, key=lambda row: row.call_id)
            time.sleep(0.1)
    finally:
        engine.dispose()


def mark_sent(platform: Platform, run_id: str, call_id: str) -> None:
    """Store the run's nodes as the scheduler does just before it sends their call."""
    engine = open_database(platform.settings.database)
    try:
        with engine.begin() as connection:
            connection.execute(
                update(DagNodeRecord)
                .where(col(DagNodeRecord.run_id) == run_id)
                .values(state="running", attempts=1, call_id=call_id, dispatched_at=time.time())
            )
    finally:
        engine.dispose()


def sleepy(node_id: str, seconds: float, **extra: Any) -> dict[str, Any]:
    return {"id": node_id, "tool": "sleepy", "arguments": {"seconds": seconds}, **extra}


def flaky(node_id: str, fail_times: int, **extra: Any) -> dict[str, Any]:
    counter = f"counter-{uuid.uuid4().hex}"
    arguments = {"counter": counter, "fail_times": fail_times}
    return {"id": node_id, "tool": "flaky", "arguments": arguments, **extra}


def test_outputs_flow_into_arguments_in_dependency_order(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    (platform_workspace / "dagdata").mkdir(exist_ok=True)
    (platform_workspace / "dagdata" / "only.txt").write_text("alpha\nbeta\n")
    plan = {
        "nodes": [
            {"id": "list", "tool": "glob", "arguments": {"pattern": "dagdata/*.txt"}},
            {
                "id": "first",
                "tool": "read",
                "arguments": {"file_path": {"$ref": "list.output.files[0]"}},
            },
            {"id": "after", "tool": "sleepy", "arguments": {"seconds": 0}, "depends_on": ["first"]},
        ]
    }

    view = finished(api, submit(api, plan))

    assert view["status"] == "succeeded", view
    found = nodes(view)
    assert found["list"]["output"]["files"] == ["dagdata/only.txt"]
    assert "alpha" in found["first"]["output"]["content"]
    assert found["first"]["depends_on"] == ["list"]
    assert found["list"]["finished_at"] <= found["first"]["started_at"]
    assert found["first"]["finished_at"] <= found["after"]["started_at"]


def test_independent_nodes_run_at_the_same_time(dag_platform: Platform, api: httpx.Client) -> None:
    plan = {"nodes": [sleepy("a", 1.0), sleepy("b", 1.0), sleepy("join", 0, depends_on=["a", "b"])]}

    run_id = submit(api, plan)
    view = finished(api, run_id)

    assert view["status"] == "succeeded", view
    rows = {row.call_id.split(":")[2]: row for row in history_rows(dag_platform, run_id, 3)}
    a, b = rows["a"], rows["b"]
    assert a.started_at is not None
    assert b.started_at is not None
    assert a.finished_at is not None
    assert b.finished_at is not None
    # On the two-slot worker each started before the other ended.
    assert a.started_at < b.finished_at
    assert b.started_at < a.finished_at


def test_stop_fails_the_run_and_cancels_what_has_not_started(
    dag_platform: Platform, api: httpx.Client
) -> None:
    plan = {
        "nodes": [
            flaky("bad", 99),
            sleepy("downstream", 0, depends_on=["bad"]),
            sleepy("slow", 0.5),
            sleepy("after_slow", 0, depends_on=["slow"]),
        ],
        "policy": {"on_failure": "stop"},
    }

    view = finished(api, submit(api, plan))

    assert view["status"] == "failed"
    assert "node bad failed" in view["error"]
    found = states(view)
    assert found["bad"] == "failed"
    assert found["downstream"] == "upstream_failed"
    assert found["after_slow"] == "cancelled"
    assert found["slow"] == "cancelled"  # it was running: its result is not waited for


def test_skip_skips_descendants_and_independent_branches_go_on(
    dag_platform: Platform, api: httpx.Client
) -> None:
    plan = {
        "nodes": [
            flaky("bad", 99, on_failure="skip"),
            sleepy("child", 0, depends_on=["bad"]),
            sleepy("grandchild", 0, depends_on=["child"]),
            sleepy("other", 0.2),
            sleepy("other_child", 0, depends_on=["other"]),
        ]
    }

    view = finished(api, submit(api, plan))

    assert states(view) == {
        "bad": "failed",
        "child": "skipped",
        "grandchild": "skipped",
        "other": "succeeded",
        "other_child": "succeeded",
    }
    assert view["status"] == "failed"
    assert view["error"] == "failed nodes: bad"


def test_retry_runs_a_flaky_node_until_it_succeeds(
    dag_platform: Platform, api: httpx.Client
) -> None:
    retry = {"max_attempts": 3, "initial_delay": 0.1, "backoff": 2, "jitter": 0}
    plan = {"nodes": [flaky("flaky", 2, on_failure="retry", retry=retry)]}

    run_id = submit(api, plan)
    view = finished(api, run_id)

    assert view["status"] == "succeeded", view
    node = nodes(view)["flaky"]
    assert node["attempts"] == 3
    assert node["output"] == {"calls": 3}
    rows = history_rows(dag_platform, run_id, 3)
    assert [row.status for row in rows] == ["error", "error", "success"]
    assert [row.call_id for row in rows] == [f"dag:{run_id}:flaky:{n}" for n in (1, 2, 3)]
    # The scheduler waited the delays: 0.1 s, then 0.2 s.
    assert rows[1].queued_at - rows[0].finished_at >= 0.1  # type: ignore[operator]
    assert rows[2].queued_at - rows[1].finished_at >= 0.2  # type: ignore[operator]


@pytest.mark.parametrize(
    ("exhausted", "child_state"), [("skip", "skipped"), ("stop", "upstream_failed")]
)
def test_retries_spent_then_skip_or_stop(
    dag_platform: Platform, api: httpx.Client, exhausted: str, child_state: str
) -> None:
    retry = {"max_attempts": 2, "initial_delay": 0, "on_exhausted": exhausted}
    plan = {
        "nodes": [
            flaky("flaky", 99, on_failure="retry", retry=retry),
            sleepy("child", 0, depends_on=["flaky"]),
            sleepy("other", 0.3),
        ]
    }

    view = finished(api, submit(api, plan))

    found = nodes(view)
    assert found["flaky"]["state"] == "failed"
    assert found["flaky"]["attempts"] == 2
    assert "failing on purpose (call 2)" in found["flaky"]["error"]
    assert found["child"]["state"] == child_state
    assert found["other"]["state"] == ("succeeded" if exhausted == "skip" else "cancelled")
    assert view["status"] == "failed"


def test_a_node_past_its_timeout_fails(dag_platform: Platform, api: httpx.Client) -> None:
    plan = {"nodes": [sleepy("slow", 1.5, timeout_s=0.3)]}

    view = finished(api, submit(api, plan))

    assert view["status"] == "failed"
    assert nodes(view)["slow"]["error"] == "timed out after 0.3 s"


def test_cancel_ends_the_run_and_starts_nothing_more(
    dag_platform: Platform, api: httpx.Client
) -> None:
    plan = {"nodes": [sleepy("first", 1.0), sleepy("second", 0, depends_on=["first"])]}
    run_id = submit(api, plan)
    wait_for(
        lambda: states(api.get(f"/v1/dags/{run_id}").json())["first"] == "running",
        10,
        "the first node to run",
    )

    response = api.post(f"/v1/dags/{run_id}/cancel")

    assert response.status_code == 202, response.text
    view = finished(api, run_id)
    assert view["status"] == "cancelled"
    assert states(view) == {"first": "cancelled", "second": "cancelled"}
    time.sleep(1.2)  # the first call ends; nothing follows it
    ran = [row.call_id.split(":")[2] for row in history_rows(dag_platform, run_id, 1)]
    assert ran == ["first"]
    assert api.post(f"/v1/dags/{run_id}/cancel").status_code == 409


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (
            {
                "nodes": [
                    {"id": "a", "tool": "sleepy", "depends_on": ["c"]},
                    {"id": "b", "tool": "sleepy", "depends_on": ["a"]},
                    {"id": "c", "tool": "sleepy", "depends_on": ["b"]},
                ]
            },
            ["dependency cycle: a → c → b → a"],
        ),
        (
            {
                "nodes": [
                    {
                        "id": "a",
                        "tool": "read",
                        "arguments": {"file_path": {"$ref": "ghost.output"}},
                    },
                    {"id": "b", "tool": "no_such_tool"},
                    {"id": "c", "tool": "sleepy", "arguments": {"seconds": "soon"}},
                ]
            },
            [
                "node 'a': arguments.file_path: $ref 'ghost.output' names unknown node 'ghost'",
                "node 'b': unknown tool: no_such_tool",
                "node 'c': parameter 'seconds' must be number, got \"soon\"",
            ],
        ),
        ({"nodes": []}, ["nodes: List should have at least 1 item after validation, not 0"]),
    ],
    ids=["cycle", "references-tools-arguments", "empty"],
)
def test_invalid_plans_are_refused_with_every_problem(
    dag_platform: Platform, api: httpx.Client, plan: dict[str, Any], expected: list[str]
) -> None:
    response = api.post("/v1/dags", json={"plan": plan})

    assert response.status_code == 422
    problems = response.json()["problems"]
    assert len(problems) == len(expected)
    for problem, wanted in zip(problems, expected, strict=True):
        assert problem.startswith(wanted), problems


def test_a_node_above_the_agents_ceiling_refuses_the_plan(
    dag_platform: Platform,
) -> None:
    token = dag_platform.agent(f"reader-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY)
    plan = {"nodes": [{"id": "w", "tool": "write", "arguments": {"file_path": "x", "content": ""}}]}

    response = httpx.post(
        f"{dag_platform.base_url}/v1/dags",
        json={"plan": plan},
        headers={"Authorization": f"Bearer {token}"},
    )

    assert response.status_code == 422
    assert response.json()["problems"] == [
        "node 'w': agent may not call this tool (needs read_write, has read_only)"
    ]


def test_runs_are_visible_to_their_agent_only(dag_platform: Platform, api: httpx.Client) -> None:
    run_id = submit(api, {"nodes": [sleepy("a", 0)]})
    token = dag_platform.agent(f"other-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY)
    headers = {"Authorization": f"Bearer {token}"}

    response = httpx.get(f"{dag_platform.base_url}/v1/dags/{run_id}", headers=headers)

    assert response.status_code == 404


def test_a_plan_sent_again_under_its_run_id_answers_with_that_run(
    dag_platform: Platform, api: httpx.Client
) -> None:
    run_id = f"retried-{uuid.uuid4().hex[:8]}"
    plan = {"nodes": [sleepy("a", 0), sleepy("b", 0, depends_on=["a"])]}
    assert api.post("/v1/dags", json={"id": run_id, "plan": plan}).status_code == 201
    first = finished(api, run_id)

    again = api.post("/v1/dags", json={"id": run_id, "plan": plan})

    assert again.status_code == 200, again.text
    assert again.json()["id"] == run_id
    assert again.json()["status"] == first["status"] == "succeeded"
    # The nodes ran once: one call each, under the run's first attempt.
    assert [node["attempts"] for node in nodes(again.json()).values()] == [1, 1]
    token = dag_platform.agent(f"other-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY)
    other = {"Authorization": f"Bearer {token}"}
    refused = {
        "another plan": api.post(
            "/v1/dags", json={"id": run_id, "plan": {"nodes": [sleepy("a", 1)]}}
        ),
        "another agent": httpx.post(
            f"{dag_platform.base_url}/v1/dags", json={"id": run_id, "plan": plan}, headers=other
        ),
    }
    for what, response in refused.items():
        assert response.status_code == 409, what
        assert response.json()["detail"] == (
            f"a run with id {run_id!r} already exists with a different plan"
        ), what


def test_a_killed_scheduler_resumes_and_runs_no_node_twice(
    dag_platform: Platform, api: httpx.Client
) -> None:
    chain = [sleepy("n0", 0.4)] + [
        sleepy(f"n{i}", 0.4, depends_on=[f"n{i - 1}"]) for i in range(1, 6)
    ]
    run_id = submit(api, {"nodes": chain})
    wait_for(
        lambda: states(api.get(f"/v1/dags/{run_id}").json())["n1"] == "running",
        20,
        "node n1 to run",
    )

    scheduler = dag_platform.processes["scheduler"]
    os.kill(scheduler.pid, signal.SIGKILL)
    scheduler.wait()
    time.sleep(1.0)  # n1 ends while no scheduler runs
    dag_platform.start_scheduler()

    view = finished(api, run_id)
    assert view["status"] == "succeeded", view
    assert all(node["attempts"] == 1 for node in view["nodes"])
    ran = [row.call_id for row in history_rows(dag_platform, run_id, 6)]
    assert ran == [f"dag:{run_id}:n{i}:1" for i in range(6)]


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_a_dangerous_node_waits_in_the_approval_inbox(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path, decision: str
) -> None:
    scratch = f"scratch-{uuid.uuid4().hex[:8]}"
    (platform_workspace / scratch).mkdir()
    plan = {
        "nodes": [
            {"id": "wipe", "tool": "bash", "arguments": {"command": f"rm -rf {scratch}"}},
            sleepy("after", 0, depends_on=["wipe"]),
        ]
    }
    run_id = submit(api, plan)
    call_id = f"dag:{run_id}:wipe:1"

    def parked() -> bool:
        pending = api.get("/v1/approvals").json()
        return any(item["call_id"] == call_id for item in pending)

    wait_for(parked, 20, "the node's call in the approval inbox")
    assert states(api.get(f"/v1/dags/{run_id}").json()) == {"wipe": "running", "after": "pending"}
    assert api.post(f"/v1/calls/{call_id}/{decision}", json={}).status_code in (200, 202)

    view = finished(api, run_id)
    if decision == "approve":
        assert view["status"] == "succeeded", view
        assert not (platform_workspace / scratch).exists()
    else:
        assert states(view) == {"wipe": "failed", "after": "upstream_failed"}
        assert nodes(view)["wipe"]["error"].startswith("denied")
        assert (platform_workspace / scratch).exists()


def test_a_call_recorded_but_never_sent_is_sent_by_the_restarted_scheduler(
    dag_platform: Platform, api: httpx.Client, redis_client: redis.Redis
) -> None:
    """The scheduler died between creating a node's call record and publishing it."""
    scheduler = dag_platform.processes["scheduler"]
    scheduler.terminate()
    scheduler.wait()
    run_id = submit(api, {"nodes": [sleepy("only", 0)]})  # pending: no scheduler runs
    call_id = f"dag:{run_id}:only:1"
    mark_sent(dag_platform, run_id, call_id)
    queued = ToolResult(call_id=call_id, tool_name="sleepy", status=ToolStatus.QUEUED)
    CallStore(redis_client, ttl_s=600).create(queued, request="as the scheduler sent it")

    dag_platform.start_scheduler()

    view = finished(api, run_id, timeout_s=20)
    assert view["status"] == "succeeded", view
    assert [row.call_id for row in history_rows(dag_platform, run_id, 1)] == [call_id]


def restart_scheduler(platform: Platform) -> None:
    """Stop the scheduler and start another; returns once the new one leads (and so has
    begun checking the running nodes' calls: `Scheduler.drop_unsent_calls`)."""
    log = platform.logs / "scheduler.log"
    led = log.read_bytes().count(b" leads")
    scheduler = platform.processes["scheduler"]
    scheduler.terminate()
    scheduler.wait()
    platform.start_scheduler()
    wait_for(lambda: log.read_bytes().count(b" leads") > led, 30, "the new scheduler to lead")


def test_a_node_call_waiting_its_turn_is_not_sent_again_by_a_restarted_scheduler(
    dag_platform: Platform, api: httpx.Client, redis_client: redis.Redis
) -> None:
    """A queued call that waits its turn in its agent's list has no message on the broker
    yet: a restarted scheduler must not take it for a call never sent (and send it
    twice)."""
    level = PermissionLevel.READ_ONLY
    worker = dag_platform.processes[f"worker-{level}"]
    worker.terminate()  # its presence goes with it: no room, calls wait their turn
    worker.wait()
    try:
        run_id = submit(api, {"nodes": [sleepy("only", 0)]})
        call_id = f"dag:{run_id}:only:1"
        store = CallStore(redis_client, ttl_s=600)
        wait_for(
            lambda: store.waiting_their_turn([call_id]) == {call_id},
            20,
            "the node's call waiting its turn",
        )
        restart_scheduler(dag_platform)
        time.sleep(1.5)  # drop_unsent_calls looks twice, UNSENT_RECHECK_S (0.5 s) apart
        assert store.waiting_their_turn([call_id]) == {call_id}
    finally:
        ready = (dag_platform.logs / f"worker-{level}.log").read_bytes().count(b"ready.")
        dag_platform.start_worker(level)
        wait_for(
            lambda: (
                (dag_platform.logs / f"worker-{level}.log").read_bytes().count(b"ready.") > ready
            ),
            60,
            "the worker again",
        )

    view = finished(api, run_id)
    assert view["status"] == "succeeded", view
    assert [row.call_id for row in history_rows(dag_platform, run_id, 1)] == [call_id]
    said = (dag_platform.logs / "scheduler.log").read_text(errors="replace")
    assert f"call {call_id} was recorded but never sent" not in said


def test_a_revoked_agents_run_starts_no_more_nodes(dag_platform: Platform) -> None:
    name = f"revoked-{uuid.uuid4().hex[:8]}"
    token = dag_platform.agent(name, PermissionLevel.READ_ONLY)
    plan = {"nodes": [sleepy("first", 1.0), sleepy("second", 0, depends_on=["first"])]}
    with httpx.Client(
        base_url=dag_platform.base_url, headers={"Authorization": f"Bearer {token}"}
    ) as agent:
        run_id = submit(agent, plan)
        wait_for(
            lambda: states(agent.get(f"/v1/dags/{run_id}").json())["first"] == "running",
            10,
            "the first node to run",
        )
    engine = open_database(dag_platform.settings.database)
    try:
        assert AgentStore(engine).revoke(name)
    finally:
        engine.dispose()

    with httpx.Client(base_url=dag_platform.base_url, headers=dag_platform.headers) as operator:
        view = finished(operator, run_id)

    assert states(view) == {"first": "succeeded", "second": "failed"}
    assert nodes(view)["second"]["error"].endswith("was revoked")


def wipe_plan(scratch: str, **node: Any) -> dict[str, Any]:
    """One dangerous node (it always waits for an operator)."""
    command = node.pop("command", f"rm -rf {scratch}")
    return {"nodes": [{"id": "wipe", "tool": "bash", "arguments": {"command": command}, **node}]}


def wait_parked(api: httpx.Client, call_id: str) -> None:
    def parked() -> bool:
        pending = api.get("/v1/approvals", params={"status": "pending"}).json()
        return any(item["call_id"] == call_id for item in pending)

    wait_for(parked, 20, f"{call_id} in the approval inbox")


def test_a_cancelled_runs_parked_call_can_never_be_approved(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    scratch = f"scratch-{uuid.uuid4().hex[:8]}"
    (platform_workspace / scratch).mkdir()
    run_id = submit(api, wipe_plan(scratch))
    call_id = f"dag:{run_id}:wipe:1"
    wait_parked(api, call_id)

    assert api.post(f"/v1/dags/{run_id}/cancel").status_code == 202
    assert finished(api, run_id)["status"] == "cancelled"
    approved = api.post(f"/v1/calls/{call_id}/approve", json={})

    assert approved.status_code == 409, approved.text
    entry = next(item for item in api.get("/v1/approvals").json() if item["call_id"] == call_id)
    assert (entry["status"], entry["decided_by"]) == ("denied", "scheduler")
    assert api.get(f"/v1/calls/{call_id}").json()["status"] == "cancelled"
    time.sleep(1.0)  # were it queued, a worker would have run it by now
    assert (platform_workspace / scratch).exists()


def test_a_node_timeout_counts_from_the_approval(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    scratch = f"scratch-{uuid.uuid4().hex[:8]}"
    (platform_workspace / scratch).mkdir()
    # The call runs past a reload of the run (every 2 s), well within its timeout.
    plan = wipe_plan(scratch, command=f"sleep 3 && rm -rf {scratch}", timeout_s=5)
    run_id = submit(api, plan)
    call_id = f"dag:{run_id}:wipe:1"
    wait_parked(api, call_id)
    time.sleep(6)  # longer than the timeout

    assert api.post(f"/v1/calls/{call_id}/approve", json={}).status_code == 202

    view = finished(api, run_id)
    assert view["status"] == "succeeded", view
    assert not (platform_workspace / scratch).exists()


def wipe_sent_by_a_dead_scheduler(
    platform: Platform, api: httpx.Client, workspace: Path
) -> tuple[str, str, ToolCall]:
    """A one-node wipe run whose node the scheduler marked as sent, then died (it is
    stopped here; the test starts it again): the scratch directory, run id and the call."""
    scheduler = platform.processes["scheduler"]
    scheduler.terminate()
    scheduler.wait()
    scratch = f"scratch-{uuid.uuid4().hex[:8]}"
    (workspace / scratch).mkdir()
    run_id = submit(api, wipe_plan(scratch))
    agent_id = api.get(f"/v1/dags/{run_id}").json()["agent_id"]
    call = ToolCall(
        id=f"dag:{run_id}:wipe:1",
        tool_name="bash",
        version="1.0.0",
        arguments={"command": f"rm -rf {scratch}"},
        agent_id=agent_id,
    )
    mark_sent(platform, run_id, call.id)
    return scratch, run_id, call


def test_a_parked_call_lost_before_its_record_is_parked_again(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    """The call is in the inbox but has no record (it was lost): the scheduler's resend
    records it, keeps the pending entry, and the call can be approved."""
    scratch, run_id, call = wipe_sent_by_a_dead_scheduler(dag_platform, api, platform_workspace)
    call_id = call.id
    engine = open_database(dag_platform.settings.database)
    try:
        verdict = Verdict(Policy.DANGEROUS, Risk.HIGH, "bash runs rm -rf")
        ApprovalInbox(engine).park(ApprovalRecord.parked(call, None, verdict, 600))
    finally:
        engine.dispose()

    early = api.post(f"/v1/calls/{call_id}/approve", json={})
    assert early.status_code == 409, early.text  # no record: nothing may be queued
    dag_platform.start_scheduler()
    wait_for(
        lambda: api.get(f"/v1/calls/{call_id}").json().get("status") == "awaiting_approval",
        20,
        "the call recorded as awaiting approval",
    )
    assert api.post(f"/v1/calls/{call_id}/approve", json={}).status_code == 202

    view = finished(api, run_id)
    assert view["status"] == "succeeded", view["nodes"]
    assert not (platform_workspace / scratch).exists()


def test_a_call_recorded_as_parked_but_never_in_the_inbox_is_parked_again(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    """The scheduler died between recording the call as awaiting approval and putting it
    in the inbox: nobody could approve it. The restarted scheduler drops the record and
    parks the call again."""
    scratch, run_id, call = wipe_sent_by_a_dead_scheduler(dag_platform, api, platform_workspace)
    call_id = call.id
    client = redis.Redis.from_url(dag_platform.redis_url)
    try:
        parked = ToolResult.accepted(call, ToolStatus.AWAITING_APPROVAL)
        assert CallStore(client, ttl_s=600).create(parked, request=call.digest())
    finally:
        client.close()
    assert api.post(f"/v1/calls/{call_id}/approve", json={}).status_code == 404  # no entry

    dag_platform.start_scheduler()
    wait_parked(api, call_id)
    assert api.post(f"/v1/calls/{call_id}/approve", json={}).status_code == 202

    view = finished(api, run_id)
    assert view["status"] == "succeeded", view["nodes"]
    assert not (platform_workspace / scratch).exists()


def test_clients_cannot_take_a_node_call_id(dag_platform: Platform, api: httpx.Client) -> None:
    body = {"id": "dag:victim:only:1", "tool_name": "read", "arguments": {"file_path": "x"}}

    response = api.post("/v1/calls", json=body)

    assert response.status_code == 422
    assert "reserved for DAG node calls" in response.text


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"id": "r" * 49, "plan": {"nodes": [sleepy("a", 0)]}}, "at most 48 characters"),
        (
            {
                "plan": {
                    "nodes": [
                        sleepy("a", 0),
                        {
                            "id": "b",
                            "tool": "read",
                            "arguments": {"file_path": {"$ref": 'a.output["\\q"]'}},
                        },
                    ]
                }
            },
            "is not a valid JSON string",
        ),
    ],
    ids=["run-id-too-long", "bad-quoted-key"],
)
def test_bad_run_requests_get_a_clear_422(
    dag_platform: Platform, api: httpx.Client, body: dict[str, Any], message: str
) -> None:
    response = api.post("/v1/dags", json=body)

    assert response.status_code == 422, response.text
    assert message in response.text


def test_an_approved_node_call_is_stopped_at_the_nodes_timeout(
    dag_platform: Platform, api: httpx.Client, platform_workspace: Path
) -> None:
    scratch = f"scratch-{uuid.uuid4().hex[:8]}"
    (platform_workspace / scratch).mkdir()
    # The tool may run 30 s; the node allows 1 s (plus the worker's slack: 7 s in all).
    arguments = {"command": f"sleep 20 && rm -rf {scratch}", "timeout": 30}
    plan = {"nodes": [{"id": "wipe", "tool": "bash", "arguments": arguments, "timeout_s": 1}]}
    run_id = submit(api, plan)
    call_id = f"dag:{run_id}:wipe:1"
    wait_parked(api, call_id)

    assert api.post(f"/v1/calls/{call_id}/approve", json={}).status_code == 202

    assert nodes(finished(api, run_id))["wipe"]["error"] == "timed out after 1 s"
    wait_for(
        lambda: api.get(f"/v1/calls/{call_id}").json()["status"] == "timeout",
        12,
        "the worker to stop the call at the node's timeout, not the tool's",
    )
    assert (platform_workspace / scratch).exists()

"""The platform across test hosts (see conftest.py): remote workers, a host cut off and
back, a host lost for good, the scheduler's host lost and restarted, terminal sessions
on the host that holds them, a Redis restart. After each: every call ended once, a tool
unsafe to repeat ran at most once, every ended call has one history row."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

import httpx
import pytest
import sqlalchemy

from tests.integration.platform import wait_for
from tests.multihost.conftest import WORKER_TTL_S, Cluster, redis_client
from toolrun.calls import keys

pytestmark = pytest.mark.integration
SETTLED_S = 60  # the bound on settling a lost worker's calls


def submit(api: httpx.Client, tool: str, *, call_id: str | None = None, **arguments: Any) -> str:
    body: dict[str, Any] = {"tool_name": tool, "arguments": arguments}
    if call_id is not None:
        body["id"] = call_id
    response = api.post("/v1/calls", json=body)
    assert response.status_code in (200, 202), response.text
    submitted: str = response.json()["call_id"]
    return submitted


def final(api: httpx.Client, call_id: str, timeout_s: float = SETTLED_S) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    result: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = api.get(f"/v1/calls/{call_id}")  # a 503 while Redis restarts
        result = response.json() if response.status_code in (200, 202) else result
        if result.get("status") not in (None, "queued", "running"):
            return result
        time.sleep(0.1)
    raise AssertionError(f"call {call_id} still {result.get('status')} after {timeout_s} s")


def ledger_calls(api: httpx.Client, cluster: Cluster, count: int, seconds: float) -> list[str]:
    """`count` bash calls that each append their id to the ledger, then sleep: a side
    effect that must happen at most once per call (bash is not safe to run twice)."""
    ids = [f"mh-{uuid.uuid4().hex[:12]}" for _ in range(count)]
    for call_id in ids:
        command = f"echo {call_id} >> ledger.txt && sleep {seconds}"
        submit(api, "bash", call_id=call_id, command=command)
    wait_for(lambda: all(i in ledger(cluster) for i in ids), 30, "every call to start")
    return ids


def ledger(cluster: Cluster) -> list[str]:
    path = cluster.workspace / "ledger.txt"
    return path.read_text().split() if path.exists() else []


def host_of(cluster: Cluster, result: dict[str, Any]) -> str:
    """The test host whose worker stored `result` (its running state names the worker)."""
    pid = int(result["metadata"]["worker_id"].rpartition("/")[2])
    for host in cluster.network.hosts:
        if pid in host.pids():
            return host.name
    raise AssertionError(f"worker {result['metadata']['worker_id']} is on no test host")


def running_on(api: httpx.Client, cluster: Cluster, ids: Iterable[str]) -> dict[str, str]:
    """Call id → the host running it."""
    found = {}
    for call_id in ids:
        result = api.get(f"/v1/calls/{call_id}").json()
        assert result["status"] == "running", result
        found[call_id] = host_of(cluster, result)
    return found


def history_rows(cluster: Cluster, call_id: str) -> int:
    engine = sqlalchemy.create_engine(cluster.database_url("127.0.0.1", 5432))
    try:
        with engine.connect() as connection:
            query = sqlalchemy.text("SELECT count(*) FROM call_history WHERE call_id = :id")
            return int(connection.execute(query, {"id": call_id}).scalar_one())
    finally:
        engine.dispose()


def ended_once(
    cluster: Cluster, api: httpx.Client, ids: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """Each call's final result, once each has exactly one ending stored, one history
    row, and — its tool being bash — its side effect at most once."""
    results = {call_id: final(api, call_id) for call_id in ids}
    client = redis_client(cluster)
    try:
        for call_id in results:
            assert client.llen(keys.done(call_id)) == 1, call_id  # one ending handed out
            # Its row (one per call id: what matters is that none is missing).
            wait_for(lambda c=call_id: history_rows(cluster, c) == 1, 20, f"{call_id}'s row")
            assert ledger(cluster).count(call_id) <= 1, call_id
    finally:
        client.close()
    return results


def serves_from(cluster: Cluster, api: httpx.Client, host: str) -> None:
    """Calls are served by `host` again (within a while: its worker may be reconnecting)."""

    def served() -> bool:
        result = final(api, submit(api, "read", file_path="hello.txt"), timeout_s=30)
        return result["status"] == "success" and host_of(cluster, result) == host

    wait_for(served, 60, f"a call served from {host}")


def test_calls_are_served_by_workers_on_other_hosts(cluster: Cluster) -> None:
    (cluster.workspace / "hello.txt").write_text("hello from the core\n")
    with cluster.api() as api:
        serves_from(cluster, api, "wa")
        serves_from(cluster, api, "wb")
        [ran] = ledger_calls(api, cluster, 1, 0)

        results = ended_once(cluster, api, [ran])

    assert results[ran]["status"] == "success", results
    assert host_of(cluster, results[ran]) in ("wa", "wb")


def test_a_host_cut_off_mid_call_and_back(cluster: Cluster) -> None:
    with cluster.api() as api:
        ids = ledger_calls(api, cluster, 4, 4)
        where = running_on(api, cluster, ids)
        assert set(where.values()) == {"wa", "wb"}, where  # two slots on each host
        cut = cluster.host("wa")

        cut.cut()
        try:
            results = {i: final(api, i) for i in ids}  # settled while it is away
        finally:
            cut.mend()
        time.sleep(WORKER_TTL_S + 4)  # it comes back, its tools' late results arrive
        results = ended_once(cluster, api, ids)
        serves_from(cluster, api, "wa")

    for call_id, host in where.items():
        result = results[call_id]
        if host == "wa":  # its worker vanished while bash ran: effects unknown, no rerun
            assert result["status"] == "error", result
            assert result["error"].startswith("worker lost after the tool started (1 time)")
        else:
            assert result["status"] == "success", result


def test_a_host_lost_for_good(cluster: Cluster) -> None:
    lost = cluster.host("wb")
    with cluster.api() as api:
        ids = ledger_calls(api, cluster, 4, 4)
        where = running_on(api, cluster, ids)
        assert "wb" in where.values(), where
        started = time.monotonic()

        lost.lose()
        results = ended_once(cluster, api, ids)
        settled_s = time.monotonic() - started
        serves_from(cluster, api, "wa")
        for level in ("read_only", "execute"):  # a replacement machine
            cluster.start_worker(lost, level)

    assert settled_s < SETTLED_S
    for call_id, host in where.items():
        expected = "error" if host == "wb" else "success"
        assert results[call_id]["status"] == expected, results[call_id]


def test_the_scheduler_host_lost_and_restarted(cluster: Cluster) -> None:
    nodes = [
        {
            "id": f"n{index}",
            "tool": "bash",
            "arguments": {"command": f"echo RUN-n{index} >> ledger.txt && sleep 1"},
        }
        | ({"depends_on": [f"n{index - 1}"]} if index else {})
        for index in range(3)
    ]
    host = cluster.host("sc")
    with cluster.api() as api:
        response = api.post("/v1/dags", json={"plan": {"nodes": nodes}})
        assert response.status_code == 201, response.text
        run_id = response.json()["id"]
        wait_for(lambda: "RUN-n1" in ledger(cluster), 30, "the second node to start")

        host.lose()
        cluster.start_scheduler(host)

        def over() -> bool:
            return api.get(f"/v1/dags/{run_id}").json()["status"] != "running"

        wait_for(over, 60, "the run to end")
        view = api.get(f"/v1/dags/{run_id}").json()

    assert view["status"] == "succeeded", view
    assert [ledger(cluster).count(f"RUN-n{index}") for index in range(3)] == [1, 1, 1]


def test_terminal_follow_ups_reach_the_host_of_their_session(cluster: Cluster) -> None:
    with cluster.api() as api:
        opened = api.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "terminal", "arguments": {"operation": "open", "command": "cat"}},
        ).json()
        assert opened["status"] == "success", opened
        session = opened["output"]["session"]
        holder = host_of(cluster, opened)
        for _ in range(3):
            sent = api.post(
                "/v1/calls",
                params={"wait": 30},
                json={
                    "tool_name": "terminal",
                    "arguments": {"operation": "send", "session": session, "text": "hi\r"},
                },
            ).json()
            assert sent["status"] == "success", sent
            assert host_of(cluster, sent) == holder
        api.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "terminal", "arguments": {"operation": "close", "session": session}},
        )


def test_a_redis_restart(cluster: Cluster) -> None:
    with cluster.api() as api:
        ids = ledger_calls(api, cluster, 3, 2)

        cluster.redis_server.stop()
        cluster.redis_server.start()  # the same port, password and data (append-only file)
        results = ended_once(cluster, api, ids)
        serves_from(cluster, api, "wa")
        serves_from(cluster, api, "wb")

    for result in results.values():
        assert result["status"] in ("success", "error"), result
        if result["status"] == "error":
            assert result["error"].startswith("worker lost after the tool started"), result

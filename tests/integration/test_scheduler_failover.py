"""Two schedulers: one leads (the lease), the other stands by and takes over when the
leader is killed; a plan sent after that still runs, each node once."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.platform import Platform, apart, wait_for
from toolrun.permissions.levels import PermissionLevel

LEASE_S = 5


@pytest.fixture
def two_schedulers(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    root = tmp_path_factory.mktemp("failover")
    env = {"TOOLRUN_SCHEDULER_LEASE_S": str(LEASE_S)}
    with apart(redis_url, 5, root, levels=(PermissionLevel.READ_ONLY,), extra_env=env) as started:
        for name in ("scheduler-a", "scheduler-b"):
            started.start_process(name, "scheduler")
        yield started


def leads(platform: Platform, name: str) -> bool:
    return b" leads" in (platform.logs / f"{name}.log").read_bytes()


def run_plan(platform: Platform, marker: str) -> dict[str, object]:
    plan = {
        "nodes": [
            {"id": "first", "tool": "sleepy", "arguments": {"seconds": 0.1}},
            {"id": "then", "tool": "sleepy", "arguments": {"seconds": 0}, "depends_on": ["first"]},
        ]
    }
    with httpx.Client(base_url=platform.base_url, headers=platform.headers, timeout=30) as api:
        run_id = api.post("/v1/dags", json={"id": marker, "plan": plan}).json()["id"]

        def over() -> bool:
            return api.get(f"/v1/dags/{run_id}").json()["status"] != "running"

        wait_for(over, 4 * LEASE_S + 30, f"run {marker} to end")
        view: dict[str, object] = api.get(f"/v1/dags/{run_id}").json()
    return view


def test_a_standby_scheduler_takes_over_from_a_killed_leader(two_schedulers: Platform) -> None:
    platform = two_schedulers
    wait_for(
        lambda: leads(platform, "scheduler-a") or leads(platform, "scheduler-b"), 30, "a leader"
    )
    leader, standby = (
        ("scheduler-a", "scheduler-b")
        if leads(platform, "scheduler-a")
        else ("scheduler-b", "scheduler-a")
    )
    assert run_plan(platform, "before")["status"] == "succeeded"
    assert not leads(platform, standby)  # one leader at a time

    killed = platform.processes.pop(leader)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    after = run_plan(platform, "after")

    assert after["status"] == "succeeded", after
    assert leads(platform, standby)
    nodes = after["nodes"]
    assert isinstance(nodes, list)
    assert [(node["state"], node["attempts"]) for node in nodes] == [("succeeded", 1)] * 2

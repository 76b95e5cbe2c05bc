"""Terminal sessions with execute workers on two machines: every follow-up call reaches
the machine that holds its session, and a session whose machine's workers are gone is
reported lost at once. Two workers with their own TOOLRUN_MACHINE_ID and home stand for
two machines (each has its own terminal host)."""

from __future__ import annotations

import shutil
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.integration.platform import Platform, other_database, running, wait_for
from toolrun.config import Settings
from toolrun.terminal.client import HostClient
from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket

MACHINES = ("alpha", "beta")


@pytest.fixture(scope="module")
def machines(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    url = other_database(redis_url)
    redis.Redis.from_url(url).flushdb()
    root = tmp_path_factory.mktemp("machines")
    workspace = root / "workspace"
    workspace.mkdir()
    setup = Platform(
        url,
        workspace,
        Path(f"/tmp/trm-{uuid.uuid4().hex[:8]}"),  # short: the hosts' unix sockets live here
        extra_env={"TOOLRUN_AUTO_APPROVE": "true"},
        levels=(),
    )
    with running(setup) as started:
        for machine in MACHINES:
            started.start_process(
                f"worker-{machine}",
                "worker",
                "--level=execute",
                env={"TOOLRUN_MACHINE_ID": machine, "TOOLRUN_HOME": str(started.logs / machine)},
            )
        for machine in MACHINES:
            wait_for(lambda m=machine: started.worker_ready(m), 60, f"the {machine} worker")
        yield started
        for machine in MACHINES:
            settings = Settings(home=started.logs / machine, machine_id=machine)
            HostClient(host_socket(settings), idle_s=HOST_IDLE_S).stop()
    shutil.rmtree(setup.logs, ignore_errors=True)


def terminal(api: httpx.Client, **arguments: Any) -> dict[str, Any]:
    body = {"tool_name": "terminal", "arguments": arguments}
    response = api.post("/v1/calls", params={"wait": 30}, json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_follow_ups_reach_the_machine_of_their_session_and_a_gone_machine_is_lost(
    machines: Platform,
) -> None:
    with httpx.Client(base_url=machines.base_url, headers=machines.headers, timeout=60) as api:
        sessions: dict[str, str] = {}
        for _ in range(30):  # opens go to whichever machine's worker is free
            opened = terminal(api, operation="open", command="python3 -q")
            assert opened["status"] == "success", opened
            session = opened["output"]["session"]
            sessions.setdefault(session.partition("-")[0], session)
            if len(sessions) == len(MACHINES):
                break
        assert sorted(sessions) == list(MACHINES)

        for round_ in range(6):
            for machine, session in sessions.items():
                terminal(api, operation="send", session=session, text=f"{round_}*7\r")
                waited = terminal(
                    api, operation="wait_for", session=session, pattern=f"^{round_ * 7}$"
                )
                assert waited["status"] == "success", (machine, waited)
                assert waited["output"]["matched"], (machine, waited)
                assert waited["metadata"]["worker"].startswith("execute@")

        beta = machines.processes["worker-beta"]
        beta.send_signal(signal.SIGTERM)
        beta.wait(timeout=30)
        lost = terminal(api, operation="read", session=sessions["beta"])
        alive = terminal(api, operation="read", session=sessions["alpha"])

    assert lost["status"] == "error"
    assert lost["error"] == (
        f"terminal session {sessions['beta']} is lost: its machine beta has no live "
        "execute worker; open a new one"
    )
    assert alive["status"] == "success", alive

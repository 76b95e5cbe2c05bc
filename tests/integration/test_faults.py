"""Faults under real workers: time limits, killed pool processes, poison messages."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis

from tests.integration.platform import Platform, wait_for
from toolrun.calls.keys import DEAD_LETTERS
from toolrun.database import open_database
from toolrun.history import HistoryStore
from toolrun.permissions.levels import PermissionLevel


def submit(api: httpx.Client, tool: str, wait: float = 60, **arguments: Any) -> dict[str, Any]:
    response = api.post(
        "/v1/calls", params={"wait": wait}, json={"tool_name": tool, "arguments": arguments}
    )
    assert response.status_code in (200, 202), response.text
    result: dict[str, Any] = response.json()
    return result


def is_dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _running(*argv: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == list(argv)]


def test_bash_past_its_timeout_is_killed_and_the_worker_serves_on(api: httpx.Client) -> None:
    started = time.monotonic()

    # The jail's PID namespace numbers its processes anew: find the sleeper by its argv.
    result = submit(api, "bash", command="sleep 301.5; true", timeout=1)

    elapsed = time.monotonic() - started
    assert result["status"] == "timeout"
    assert result["error"] == "command timed out after 1 s"
    assert elapsed < 10
    assert all(is_dead(pid) for pid in _running("sleep", "301.5"))
    assert submit(api, "bash", command="echo still serving")["output"]["stdout"] == "still serving"


def test_python_tool_past_its_limit_is_stopped_by_the_soft_limit(api: httpx.Client) -> None:
    started = time.monotonic()

    result = submit(api, "sleepy", seconds=60)  # tool limit 2 s: soft limit at 4 s

    assert result["status"] == "timeout"
    assert result["error"] == "call exceeded its time limit and was stopped"
    assert time.monotonic() - started < 15
    assert submit(api, "sleepy", seconds=0.05)["status"] == "success"


def test_a_tool_ignoring_the_soft_limit_is_ended_by_the_hard_limit(
    api: httpx.Client, platform_workspace: Path
) -> None:
    result = submit(api, "stubborn", seconds=60, pid_file="stubborn.pid")  # limit 1 s: hard 6 s

    assert result["status"] == "timeout"
    assert result["error"].startswith("hard time limit")
    pid = int((platform_workspace / "stubborn.pid").read_text().split()[0])
    wait_for(lambda: is_dead(pid), 10, "the killed pool process to be gone")
    assert submit(api, "read", file_path="hello.txt")["status"] == "success"


def test_a_pool_process_killed_mid_call_gets_the_call_redelivered(
    api: httpx.Client, platform: Platform, platform_workspace: Path
) -> None:
    pid_file = platform_workspace / "redelivered.pid"
    queued = submit(api, "sleepy", wait=0, seconds=1.5, pid_file=pid_file.name)
    wait_for(lambda: pid_file.read_text().strip() != "", 20, "the call to start")
    first = int(pid_file.read_text().split()[0])
    assert first in platform.pool_pids(PermissionLevel.READ_ONLY)

    os.kill(first, signal.SIGKILL)

    final = submit_wait(api, queued["call_id"])
    assert final["status"] == "success", final
    assert (final["metadata"]["deliveries"], final["metadata"]["tool_starts"]) == (2, 2)
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert len(pids) == 2
    assert pids[1] != first


def test_a_call_of_a_tool_unsafe_to_repeat_whose_worker_dies_ends_as_an_error(
    api: httpx.Client, platform: Platform, platform_workspace: Path
) -> None:
    """Never a silent second run: the redelivered call ends with an error saying so, and
    the tool started once."""
    pid_file = platform_workspace / "once.pid"
    queued = submit(api, "sleepy_once", wait=0, seconds=1.5, pid_file=pid_file.name)
    wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "", 20, "the start")
    first = int(pid_file.read_text().split()[0])
    assert first in platform.pool_pids(PermissionLevel.READ_ONLY)

    os.kill(first, signal.SIGKILL)

    final = submit_wait(api, queued["call_id"])
    assert final["status"] == "error", final
    assert final["error"] == (
        "worker lost after the tool started (1 time); its effects are unknown, and "
        "sleepy_once@1.0.0 is not safe to run twice: not run again"
    )
    assert (final["metadata"]["deliveries"], final["metadata"]["tool_starts"]) == (2, 1)
    assert pid_file.read_text().split() == [str(first)]


def test_a_pool_process_killed_right_after_its_calls_loses_no_history_row(
    api: httpx.Client, platform: Platform, platform_workspace: Path
) -> None:
    """The rows go to the outbox with the results, before the messages are acknowledged:
    killing the pool process at once (before any batch of rows could have been written
    from it) loses none."""
    pid_file = platform_workspace / "ended.pid"
    results = [submit(api, "sleepy", seconds=0, pid_file=pid_file.name) for _ in range(3)]
    assert all(result["status"] == "success" for result in results), results
    for pid in {int(pid) for pid in pid_file.read_text().split()}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    history = HistoryStore(open_database(platform.settings.database))
    for result in results:
        wait_for(lambda c=result["call_id"]: history.get(c) is not None, 15, "its history row")
        row = history.get(result["call_id"])
        assert row is not None
        assert row.status == "success"
    history.engine.dispose()


def test_a_call_that_always_kills_its_worker_is_dead_lettered(
    api: httpx.Client, redis_client: redis.Redis, platform_workspace: Path
) -> None:
    queued = submit(api, "suicidal", wait=0, pid_file="suicidal.pid")

    final = submit_wait(api, queued["call_id"])

    assert final["status"] == "error"
    assert final["error"] == (
        "worker lost 3 times while running this call; it was dead-lettered and will not be retried"
    )
    assert len((platform_workspace / "suicidal.pid").read_text().split()) == 3
    assert queued["call_id"].encode() in redis_client.lrange(DEAD_LETTERS, 0, -1)


def submit_wait(api: httpx.Client, call_id: str, timeout_s: float = 60) -> dict[str, Any]:
    """Poll a call until it has a final status; never stuck in queued/running."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result: dict[str, Any] = api.get(f"/v1/calls/{call_id}").json()
        if result["status"] not in {"queued", "running"}:
            return result
        time.sleep(0.1)
    raise AssertionError(f"call {call_id} still {result['status']} after {timeout_s:g} s")

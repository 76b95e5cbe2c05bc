"""`toolrun up` on a clean directory: its own Redis, API, a worker per level and one for
delegations, Flower; Ctrl-C stops all, the terminal host included."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import psutil

from tests.integration.platform import free_port, wait_for
from toolrun.config import Settings
from toolrun.terminal.client import HostClient
from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No TOOLRUN_* settings, and a home directory of the test's own (HOME)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("TOOLRUN_") and key != "XDG_STATE_HOME"
    }
    return env | {"HOME": str(tmp_path / "user")} | extra


def test_up_serves_calls_and_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("embedded default\n")
    api_port = free_port()
    # Flower's port is taken (as by a second platform's): Flower gets another, printed.
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    busy_port = taken.getsockname()[1]
    env = clean_env(tmp_path, TOOLRUN_FLOWER_PORT=str(busy_port))
    log = tmp_path / "up.log"
    with log.open("wb") as sink:
        up = subprocess.Popen(
            [sys.executable, "-m", "toolrun", "up", f"--port={api_port}"],
            cwd=project,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{api_port}"
    try:
        wait_for(lambda: b"Ctrl-C stops everything" in log.read_bytes(), 90, "toolrun up")
        descendants = psutil.Process(up.pid).children(recursive=True)
        output = log.read_text()
        assert f"API      {base}" in output
        assert f"API docs {base}/docs" in output
        [flower_port] = [int(p) for p in re.findall(r"Flower +http://127.0.0.1:(\d+)", output)]
        assert flower_port != busy_port
        assert f"Flower's port {busy_port} is taken; it uses {flower_port}" in output
        # The platform's state lives outside the workspace, where tools cannot read it.
        [state] = (tmp_path / "user" / ".local" / "state" / "toolrun").glob("project-*")
        assert not list(project.glob(".toolrun*"))
        assert (state / "redis").is_dir()
        config = state / "redis" / "redis.conf"
        password = config.read_text().split("requirepass ")[1].strip()
        assert password not in output  # printed URLs never carry it
        assert config.stat().st_mode & 0o777 == 0o600
        token_file = state / "admin.token"
        assert f"Token {token_file} (admin; created now" in " ".join(output.split())
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        assert token not in output
        # Lines ready to paste into another shell.
        assert f"export TOOLRUN_API={base} TOOLRUN_TOKEN=$(cat {token_file})" in output
        assert 'echo "$TOOLRUN_API/ui/approvals#token=$TOOLRUN_TOKEN"' in output
        # What tools returned (Redis's files, the database) is the owner's only.
        assert state.stat().st_mode & 0o777 == 0o700
        exposed = [p for p in state.rglob("*") if p.is_file() and p.stat().st_mode & 0o077]
        assert exposed == [], exposed

        assert read_notes(base, token)["output"]["content"] == "     1\tembedded default"
        finds_the_platform_from_a_subdirectory(project, env, token)
        commands = [" ".join(process.cmdline()) for process in descendants]
        assert any("worker --delegation" in command for command in commands)
        runs_independent_nodes_side_by_side(base, token, output)
        # Before the kills below: Flower sees the events sent while it is connected.
        wait_for(
            lambda: httpx.get(f"http://127.0.0.1:{flower_port}/").status_code == 200, 30, "Flower"
        )
        flower_shows_a_failed_call_as_failed(base, token, flower_port)
        heals_a_killed_worker(up, base, token, log)
        heals_a_killed_redis(up, base, token, log)
        terminal_host = open_terminal_session(base, token, state)

        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0
        for process in descendants:
            wait_for(
                lambda p=process: not p.is_running() or p.status() == psutil.STATUS_ZOMBIE,
                10,
                f"{process.pid} to stop",
            )
        # The terminal host is no child of `up`, but `up` stops it too.
        wait_for(lambda: not psutil.pid_exists(terminal_host), 10, "the terminal host to stop")
        said = log.read_text()
        assert said.rstrip().endswith("toolrun stopped.")
        # Quiet by default: the processes' own output went to their files in the home.
        assert "celery@" not in said
        assert "[queues]" not in said
        logs = state / "logs"
        assert f"Logs     {logs}/" in said
        assert b"ready." in (logs / "worker-read_only.log").read_bytes()
        assert {p.name for p in logs.iterdir()} >= {"api.log", "scheduler.log", "flower.log"}
    finally:
        taken.close()
        kill_all(up)


def finds_the_platform_from_a_subdirectory(project: Path, env: dict[str, str], token: str) -> None:
    """With no TOOLRUN_* set, the CLI run below the workspace finds its home (the admin
    token) and the API on its non-default port, as `toolrun up` left them there."""
    deep = project / "src" / "deep"
    deep.mkdir(parents=True)
    listed = subprocess.run(
        [sys.executable, "-m", "toolrun", "agents", "list", "--json"],
        cwd=deep,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert [agent["name"] for agent in json.loads(listed.stdout)] == ["admin"]
    assert token not in listed.stdout + listed.stderr


def read_notes(base: str, token: str, file_path: str = "notes.txt") -> dict[str, Any]:
    """A `read` of `file_path` through the API, waited for."""
    response = httpx.post(
        f"{base}/v1/calls",
        params={"wait": 60},
        json={"tool_name": "read", "arguments": {"file_path": file_path}},
        timeout=70,
        headers={"Authorization": f"Bearer {token}"},
    )
    result: dict[str, Any] = response.json()
    return result


def kill_all(up: subprocess.Popen[bytes]) -> None:
    """`toolrun up` and every process it started (each in a session of its own), if a
    failed test left them running."""
    if up.poll() is not None:
        return
    with contextlib.suppress(psutil.NoSuchProcess):
        for child in psutil.Process(up.pid).children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
    os.killpg(up.pid, signal.SIGKILL)
    up.wait()


def runs_independent_nodes_side_by_side(base: str, token: str, output: str) -> None:
    """The default pools (shown in the summary) give a plan's four `sleep` nodes a slot
    each: every node starts before any ends."""
    [execute_slots] = re.findall(r"Workers .*execute (\d+)", output)
    assert int(execute_slots) >= 4
    assert "Sharing  agents served in turn; each agent by default: 1000 calls waiting" in output
    plan = {
        "nodes": [
            {"id": f"n{index}", "tool": "bash", "arguments": {"command": "sleep 3"}}
            for index in range(4)
        ]
    }
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as api:
        run_id = api.post("/v1/dags", json={"plan": plan}).json()["id"]
        wait_for(
            lambda: api.get(f"/v1/dags/{run_id}").json()["status"] != "running", 30, "the plan"
        )
        view = api.get(f"/v1/dags/{run_id}").json()
        assert view["status"] == "succeeded", view
        ran = [api.get(f"/v1/calls/{node['call_id']}").json()["metadata"] for node in view["nodes"]]
    # When and how long each ran on its worker (the node's own times are the scheduler's).
    assert max(call["started_at"] for call in ran) < min(call["finished_at"] for call in ran)


def test_up_names_a_taken_api_port_before_starting_anything(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "toolrun", "up", f"--port={port}"],
            cwd=project,
            env=clean_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert f"port {port} on 127.0.0.1 is taken" in said
    assert "--port N or TOOLRUN_API_PORT" in said
    assert not list((tmp_path / "user").rglob("redis.conf"))  # nothing was started


def heals_a_killed_worker(up: subprocess.Popen[bytes], base: str, token: str, log: Path) -> None:
    """kill -9 of the read_only worker's main process: `toolrun up` starts it again, says
    so, /healthz counts the restart, and read calls are served again."""
    [worker] = [
        p
        for p in psutil.Process(up.pid).children()
        if "worker --level=read_only" in " ".join(p.cmdline())
    ]
    os.killpg(worker.pid, signal.SIGKILL)  # the worker and its pool processes

    def restarted() -> bool:
        health = httpx.get(f"{base}/healthz", timeout=10).json()
        return bool(health["processes"]["worker read_only"]["restarts"] == 1)

    wait_for(restarted, 60, "the worker started again")
    assert up.poll() is None
    assert "worker read_only exited (code -9); restarting in 1 s" in " ".join(
        log.read_text().split()
    )
    result = read_notes(base, token)
    assert result["status"] == "success", result
    health = httpx.get(f"{base}/healthz", timeout=10).json()
    assert health["processes"]["api"] == {
        "pid": health["processes"]["api"]["pid"],
        "state": "running",
        "restarts": 0,
        "optional": False,
    }
    assert health["processes"]["flower"]["optional"] is True


def flower_shows_a_failed_call_as_failed(base: str, token: str, flower_port: int) -> None:
    """A tool call that ends in error is a failed task in Flower (operators watch it),
    and Celery neither retried nor redelivered it. Flower learns of tasks from events sent
    while it listens: a call made before it does is tried again with another."""
    for _ in range(6):
        failed = read_notes(base, token, "missing.txt")
        assert failed["status"] == "error", failed
        assert failed["metadata"]["deliveries"] == 1
        page = f"http://127.0.0.1:{flower_port}/task/{failed['call_id']}"
        with contextlib.suppress(AssertionError):
            wait_for(lambda p=page: "FAILURE" in httpx.get(p).text, 5, "Flower")
            break
    text = httpx.get(page).text
    assert "FAILURE" in text
    assert "ToolCallFailed(&#x27;error: file not found: missing.txt&#x27;)" in text


def heals_a_killed_redis(up: subprocess.Popen[bytes], base: str, token: str, log: Path) -> None:
    """kill -9 of the platform's own Redis: `toolrun up` starts it again on its port with
    its password and data (a call made before is still there), and calls are served again."""
    before = read_notes(base, token)["call_id"]
    [server] = [p for p in psutil.Process(up.pid).children() if "redis-server" in p.name()]
    server.send_signal(signal.SIGKILL)

    def restarted() -> bool:
        health = httpx.get(f"{base}/healthz", timeout=10).json()
        return bool(health["processes"]["redis"]["restarts"] == 1)

    wait_for(restarted, 60, "Redis started again")
    assert "redis exited (code -9); restarting in 1 s" in " ".join(log.read_text().split())
    headers = {"Authorization": f"Bearer {token}"}
    kept = httpx.get(f"{base}/v1/calls/{before}", headers=headers, timeout=10)
    assert kept.status_code == 200, kept.text
    assert kept.json()["status"] == "success"
    wait_for(lambda: read_notes(base, token)["status"] == "success", 60, "calls served again")
    assert up.poll() is None


def open_terminal_session(base: str, token: str, state: Path) -> int:
    """Open a session (an admin approves it) and return its terminal host's pid."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=40) as api:
        body = {"tool_name": "terminal", "arguments": {"operation": "open", "command": "cat"}}
        parked = api.post("/v1/calls", json=body).json()
        assert parked["status"] == "awaiting_approval", parked
        assert api.post(f"/v1/calls/{parked['call_id']}/approve").status_code == 202
        opened = api.get(f"/v1/calls/{parked['call_id']}", params={"wait": 30}).json()
    assert opened["status"] == "success", opened["error"]
    host = HostClient(host_socket(Settings(home=state)), idle_s=HOST_IDLE_S)
    answer = host.request({"op": "ping"}, timeout_s=5)
    pid: int = answer["pid"]
    return pid


def test_up_refuses_a_home_inside_the_workspace(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "up"],
        cwd=tmp_path,
        env=clean_env(tmp_path, TOOLRUN_HOME=str(tmp_path / ".toolrun")),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert "is inside the workspace" in " ".join(done.stderr.split())
    assert not (tmp_path / ".toolrun").exists()

"""`toolrun dag` and the SDK's DAG methods against the real platform and its scheduler."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from subprocess import PIPE
from typing import Any

import pytest

from tests.integration.platform import Platform, wait_for
from toolrun.client import AsyncClient, Client
from toolrun.dag import parse_plan

RUN_TIMEOUT_S = 60.0


def _plan_file(tmp_path: Path, text: str, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _states(view: dict[str, Any]) -> dict[str, str]:
    return {node["id"]: node["state"] for node in view["nodes"]}


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """stderr with rich's line wrapping undone."""
    assert "Traceback" not in done.stdout + done.stderr
    return " ".join(done.stderr.split())


def _sleepy_chain(count: int, seconds: float) -> str:
    """Plan text: `count` sleepy nodes n1, n2, ... each after the one before."""
    lines = ["nodes:"]
    for index in range(1, count + 1):
        after = f", depends_on: [n{index - 1}]" if index > 1 else ""
        lines.append(
            f"  - {{id: n{index}, tool: sleepy, arguments: {{seconds: {seconds}}}{after}}}"
        )
    return "\n".join(lines) + "\n"


def test_run_wait_json_feeds_globbed_path_into_read(dag_platform: Platform, tmp_path: Path) -> None:
    folder = f"dagcli-{uuid.uuid4().hex[:8]}"
    (dag_platform.workspace / folder).mkdir()
    (dag_platform.workspace / folder / "note.txt").write_text("written for the dag cli\n")
    plan = _plan_file(
        tmp_path,
        f"""\
nodes:
  - id: find
    tool: glob
    arguments: {{pattern: "{folder}/*.txt"}}
  - id: show
    tool: read
    arguments:
      file_path: {{$ref: "find.output.files[0]"}}
""",
    )

    done = dag_platform.cli("dag", "run", str(plan), "--wait", "--json")

    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["status"] == "succeeded"
    assert _states(view) == {"find": "succeeded", "show": "succeeded"}
    nodes = {node["id"]: node for node in view["nodes"]}
    assert nodes["find"]["output"]["files"] == [f"{folder}/note.txt"]
    assert "written for the dag cli" in nodes["show"]["output"]["content"]
    assert nodes["show"]["depends_on"] == ["find"]

    shown = dag_platform.cli("dag", "output", view["id"], "show")
    assert shown.returncode == 0, shown.stderr
    assert "written for the dag cli" in shown.stdout
    assert " ".join(shown.stderr.split()).startswith("success read")
    nowhere = dag_platform.cli("dag", "output", view["id"], "nope")
    assert nowhere.returncode == 2
    assert f"run {view['id']} has no node 'nope'; its nodes: find, show" in nowhere.stderr


def test_run_prints_an_id_that_status_and_list_know(dag_platform: Platform, tmp_path: Path) -> None:
    plan = _plan_file(tmp_path, _sleepy_chain(2, 0.2))

    started = dag_platform.cli("dag", "run", str(plan))

    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    assert run_id
    assert "\n" not in run_id
    assert f"toolrun dag status {run_id} --watch" in _said(started)
    status = dag_platform.cli("dag", "status", run_id, "--json")
    assert status.returncode == 0, status.stderr
    view = json.loads(status.stdout)
    assert view["id"] == run_id
    assert set(_states(view)) == {"n1", "n2"}
    watched = dag_platform.cli("dag", "status", run_id, "--watch")
    assert watched.returncode == 0, watched.stderr
    assert f"run {run_id} succeeded: 2 succeeded" in " ".join(watched.stdout.split())
    listed = dag_platform.cli("dag", "list", "--status", "succeeded", "--json")
    assert listed.returncode == 0, listed.stderr
    assert run_id in [run["id"] for run in json.loads(listed.stdout)]


def test_cancel_ends_a_run_cancelled(dag_platform: Platform, tmp_path: Path) -> None:
    run_id = f"cli-cancel-{uuid.uuid4().hex[:8]}"
    # Sleepy's time limit is 2 s, so a chain: a CLI process takes seconds to start (more
    # on a busy machine), and the chain must outlast it.
    plan = _plan_file(tmp_path, _sleepy_chain(12, 1.5))
    started = dag_platform.cli("dag", "run", str(plan), "--id", run_id)
    assert started.returncode == 0, started.stderr
    assert started.stdout == f"{run_id}\n"
    with Client(dag_platform.base_url, token=dag_platform.token) as client:
        wait_for(lambda: _states(client.get_dag(run_id))["n1"] == "running", 10, "the first node")

    cancelled = dag_platform.cli("dag", "cancel", run_id)

    assert cancelled.returncode == 0, cancelled.stderr
    # The scheduler may have cancelled the run before the API answered (a busy machine).
    said = _said(cancelled)
    assert "cancel requested" in said or said == f"run {run_id} is cancelled", said
    ended = dag_platform.cli("dag", "status", run_id, "--watch", "--json")
    assert ended.returncode == 1, ended.stderr
    view = json.loads(ended.stdout)
    assert view["status"] == "cancelled"
    states = _states(view)
    assert set(states.values()) <= {"succeeded", "cancelled"}, states
    assert states["n12"] == "cancelled"
    again = dag_platform.cli("dag", "cancel", run_id)
    assert again.returncode == 1
    assert "refused (409)" in _said(again)


def test_run_of_an_invalid_plan_lists_every_problem_and_exits_2(
    dag_platform: Platform, tmp_path: Path
) -> None:
    plan = _plan_file(
        tmp_path,
        """\
nodes:
  - {id: a, tool: read, arguments: {file_path: {$ref: ghost.output}}}
  - {id: b, tool: no_such_tool}
  - {id: c, tool: sleepy, arguments: {seconds: soon}}
""",
    )

    done = dag_platform.cli("dag", "run", str(plan), "--wait")

    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"invalid plan {plan}:"
    assert lines[1].startswith("  - node 'a': arguments.file_path: $ref 'ghost.output' names")
    assert lines[2].startswith("  - node 'b': unknown tool: no_such_tool")
    assert lines[3] == "  - node 'c': parameter 'seconds' must be number, got \"soon\""
    assert done.stdout == ""


def test_run_of_an_unreadable_plan_is_a_usage_error(dag_platform: Platform, tmp_path: Path) -> None:
    done = dag_platform.cli("dag", "run", str(tmp_path / "absent.yaml"), "--wait")

    assert done.returncode == 2
    assert "cannot read" in _said(done)


def test_sdk_submits_a_plan_and_waits_for_it(dag_platform: Platform) -> None:
    plan = parse_plan({"nodes": [{"id": "nap", "tool": "sleepy", "arguments": {"seconds": 1.0}}]})
    run_id = f"sdk-{uuid.uuid4().hex[:8]}"
    with Client(dag_platform.base_url, token=dag_platform.token) as client:
        started = client.submit_plan(plan, run_id=run_id)
        assert (started["id"], started["status"]) == (run_id, "running")
        with pytest.raises(TimeoutError, match=run_id):
            client.wait_dag(run_id, timeout=0.1)

        view = client.wait_dag(run_id, timeout=RUN_TIMEOUT_S)

        assert view["status"] == "succeeded"
        assert view["nodes"][0]["output"]["slept"] == 1.0
        assert client.get_dag(run_id) == view
        assert run_id in [run["id"] for run in client.list_dags(status="succeeded")]


def test_async_sdk_runs_a_plan_to_the_end(dag_platform: Platform) -> None:
    plan = {"nodes": [{"id": "nap", "tool": "sleepy", "arguments": {"seconds": 0}}]}

    async def scenario() -> dict[str, Any]:
        async with AsyncClient(dag_platform.base_url, token=dag_platform.token) as client:
            started = await client.submit_plan(plan)
            return await client.wait_dag(started["id"], timeout=RUN_TIMEOUT_S)

    view = asyncio.run(scenario())
    assert view["status"] == "succeeded"
    assert _states(view) == {"nap": "succeeded"}


def test_ctrl_c_stops_watching_and_the_run_goes_on(dag_platform: Platform, tmp_path: Path) -> None:
    run_id = f"cli-interrupt-{uuid.uuid4().hex[:8]}"
    plan = _plan_file(tmp_path, _sleepy_chain(3, 1.0))
    env = {
        **os.environ,
        "TOOLRUN_API": dag_platform.base_url,
        "TOOLRUN_HOME": str(dag_platform.settings.home),
    }
    argv = [sys.executable, "-m", "toolrun", "dag", "run", str(plan), "--wait", "--id", run_id]
    watcher = subprocess.Popen(argv, env=env, stdout=PIPE, stderr=PIPE, text=True)
    with Client(dag_platform.base_url, token=dag_platform.token) as client:
        try:
            # By the time a node runs, the command has its answer and is following the run.
            wait_for(lambda: _states(client.get_dag(run_id))["n1"] == "running", 20, "n1")
            watcher.send_signal(signal.SIGINT)
            stdout, stderr = watcher.communicate(timeout=30)
        finally:
            watcher.kill()
            watcher.wait()

        assert watcher.returncode == 130, stdout + stderr
        said = " ".join(stderr.split())
        assert f"stopped watching; run {run_id} goes on" in said
        assert f"toolrun dag cancel {run_id}" in said
        assert "Traceback" not in stderr
        assert client.get_dag(run_id)["status"] == "running"
        client.cancel_dag(run_id)
        assert client.wait_dag(run_id, timeout=RUN_TIMEOUT_S)["status"] == "cancelled"

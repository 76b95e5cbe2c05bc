"""Interactive work through the API: terminal session round trips and task (sub-agent)
round trips, on a real platform (embedded Redis, API, workers, a delegation worker) with a
scripted model server that answers at once, so the task figures are toolrun's own overhead.

Cases, each call a `POST /v1/calls?wait=...` by one client:
- terminal open (python3 REPL) until its prompt;
- terminal `send` a line + `wait_for` its answer (two calls), and a bare `read`;
- task, one model turn without tools; task, two turns with one `grep` call in between.

Prints a table, writes bench/results/api_sessions.json. Nothing is asserted.

    .venv/bin/python -m bench.api_sessions [--calls 100]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table
from tests.scripted_model import ScriptedModel, answer, tool_calls  # the tests' model server

from bench.platform_roundtrip import CHECKOUT_PATH, ROOT, percentile, start, stop, wait_ready
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.embedded import RedisServer
from toolrun.embedded.redis_server import free_port
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.terminal.client import HostClient
from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket

RESULTS = ROOT / "bench" / "results" / "api_sessions.json"


def stats(samples_s: list[float]) -> dict[str, float]:
    return {
        "n": len(samples_s),
        "p50_ms": percentile(samples_s, 0.50) * 1000,
        "p95_ms": percentile(samples_s, 0.95) * 1000,
    }


class Api:
    """Calls through the API as one agent, each timed."""

    def __init__(self, base: str, token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        self.http = httpx.Client(base_url=base, headers=headers, timeout=120)

    def call(self, tool: str, **arguments: Any) -> tuple[dict[str, Any], float]:
        started = time.perf_counter()
        response = self.http.post(
            "/v1/calls", params={"wait": 60}, json={"tool_name": tool, "arguments": arguments}
        )
        elapsed = time.perf_counter() - started
        result: dict[str, Any] = response.json()
        if result.get("status") != "success":
            raise SystemExit(f"{tool} failed: {result}")
        return result, elapsed


def bench_terminal(api: Api, calls: int) -> dict[str, dict[str, float]]:
    opens, round_trips, reads = [], [], []
    for _ in range(3):
        started = time.perf_counter()
        session = api.call("terminal", operation="open", command="python3 -q")[0]["output"]
        api.call("terminal", operation="wait_for", session=session["session"], pattern="^>>> ")
        opens.append(time.perf_counter() - started)
        api.call("terminal", operation="close", session=session["session"])
    session = api.call("terminal", operation="open", command="python3 -q")[0]["output"]["session"]
    api.call("terminal", operation="wait_for", session=session, pattern="^>>> ")
    for value in range(calls):
        _, sent = api.call("terminal", operation="send", session=session, text=f"{value}+1\r")
        _, waited = api.call(
            "terminal", operation="wait_for", session=session, pattern=f"^{value + 1}$"
        )
        round_trips.append(sent + waited)
        reads.append(api.call("terminal", operation="read", session=session)[1])
    api.call("terminal", operation="close", session=session)
    return {
        "terminal open to prompt": stats(opens),
        "terminal send + wait_for": stats(round_trips),
        "terminal read": stats(reads),
    }


def bench_task(
    api: Api, model: ScriptedModel, calls: int, workspace: Path
) -> dict[str, dict[str, float]]:
    folder = workspace / ".toolrun" / "agents"
    folder.mkdir(parents=True)
    (folder / "searcher.md").write_text(
        "---\nname: searcher\ndescription: Searches.\ntools: [grep, read]\n---\nSearch.\n"
    )
    answers, searches = [], []
    for _ in range(calls):
        model.script(answer("done"))
        answers.append(api.call("task", agent="searcher", prompt="p")[1])
        model.script(tool_calls(("grep", {"pattern": "needle"})), answer("found"))
        searches.append(api.call("task", agent="searcher", prompt="p")[1])
    return {"task, 1 turn, no tool": stats(answers), "task, 2 turns, 1 grep": stats(searches)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=100, help="samples per case")
    options = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(dir="/tmp", prefix="bas-") as scratch,
        ScriptedModel() as model,
    ):
        root = Path(scratch)
        workspace = root / "w"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("a needle in a haystack\n")
        server = RedisServer(root / "redis")
        server.start()
        home = root / "h"
        env = {
            **os.environ,
            "PYTHONPATH": CHECKOUT_PATH,
            "TOOLRUN_REDIS_URL": server.url,
            "TOOLRUN_WORKSPACE": str(workspace),
            "TOOLRUN_HOME": str(home),
            "TOOLRUN_AUTO_APPROVE": "true",
            "TOOLRUN_MODEL_BASE_URL": model.url,
            "TOOLRUN_MODEL": "scripted",
        }
        settings = Settings(home=home)
        engine = open_database(settings.database)
        _agent, token = AgentStore(engine).create("bench", ceiling=PermissionLevel.EXECUTE)
        engine.dispose()
        me = [sys.executable, "-m", "toolrun"]
        port = free_port()
        processes = [
            start([*me, "worker", f"--level={level}", "--loglevel=WARNING"], env, root / "w.log")
            for level in ("read_only", "execute")
        ]
        processes.append(
            start([*me, "worker", "--delegation", "--loglevel=WARNING"], env, root / "d.log")
        )
        processes.append(start([*me, "api", f"--port={port}"], env, root / "api.log"))
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(lambda: httpx.get(f"{base}/healthz").status_code == 200, "toolrun API")
            api = Api(base, token)
            wait_ready(lambda: api.call("read", file_path="notes.txt"), "the workers")
            results = bench_terminal(api, options.calls)
            results |= bench_task(api, model, options.calls, workspace)
        finally:
            for process in processes:
                stop(process)
            HostClient(host_socket(Settings(home=home)), idle_s=HOST_IDLE_S).stop()
            server.stop()
    report(results)


def report(results: dict[str, dict[str, float]]) -> None:
    table = Table(title="through the API, one client (each call POST /v1/calls?wait)")
    for column in ("case", "n", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right")
    for case, data in results.items():
        table.add_row(case, str(data["n"]), f"{data['p50_ms']:.2f}", f"{data['p95_ms']:.2f}")
    console = Console()
    console.print(table)
    facts = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": facts, "results": results}, indent=2))
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

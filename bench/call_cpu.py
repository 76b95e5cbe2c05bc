"""CPU seconds per call, by process, at 32 clients: toolrun's `read` through the API
against the raw Celery no-op of `platform_roundtrip` (same settings, same embedded Redis).

The two-core machine is CPU-bound at 32 clients, so throughput is the inverse of the CPU
a call costs across every process; this says where that CPU goes. Prints a table, writes
bench/results/call_cpu.json. Nothing is asserted.

    .venv/bin/python -m bench.call_cpu [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil
from rich.console import Console
from rich.table import Table

from bench._http import Connection
from bench.platform_roundtrip import (
    CHECKOUT_PATH,
    CONCURRENCY,
    READ_BODY,
    ROOT,
    small_workspace,
    start,
    stop,
    wait_ready,
)
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.embedded import RedisServer
from toolrun.embedded.redis_server import free_port
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel

RESULTS = ROOT / "bench" / "results" / "call_cpu.json"
Groups = dict[str, Callable[[], list[psutil.Process]]]


def cpu_s(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def worker_groups(pid: int) -> Groups:
    """A worker's main process (it takes messages, sends events, writes history) and its
    pool processes (they run the calls), apart."""
    return {
        "worker main": lambda: [psutil.Process(pid)],
        "worker pool": lambda: psutil.Process(pid).children(recursive=True),
    }


def per_call(groups: Groups, load: Callable[[], int]) -> dict[str, float]:
    """Run `load` (returns how many calls it made); CPU ms per call of each group."""
    before = {name: cpu_s(found()) for name, found in groups.items()}
    calls = load()
    after = {name: cpu_s(found()) for name, found in groups.items()}
    shares = {name: 1000 * (after[name] - before[name]) / calls for name in groups}
    return {**shares, "total": sum(shares.values()), "calls": calls}


def toolrun_side(
    env: dict[str, str], logs: Path, seconds: float, redis_pid: int
) -> dict[str, float]:
    workspace = small_workspace(logs)
    home = logs / "home"
    toolrun_env = {
        **env,
        "TOOLRUN_REDIS_URL": env["BENCH_REDIS_URL"],
        "TOOLRUN_WORKSPACE": str(workspace),
        "TOOLRUN_HOME": str(home),
    }
    engine = open_database(Settings(home=home).database)
    _agent, token = AgentStore(engine).create("bench", ceiling=PermissionLevel.READ_ONLY)
    engine.dispose()
    me = [sys.executable, "-m", "toolrun"]
    port = free_port()
    worker = start(
        [*me, "worker", "--level=read_only", "--concurrency=2"], toolrun_env, logs / "w.log"
    )
    api = start([*me, "api", f"--port={port}"], toolrun_env, logs / "a.log")
    try:
        wait_ready(lambda: httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200, "API")
        asyncio.run(_calls(port, token, 1, 300))  # warm: pool processes, connections
        groups: Groups = {
            "client": lambda: [psutil.Process()],
            "api": lambda: tree(api.pid),
            **worker_groups(worker.pid),
            "redis": lambda: [psutil.Process(redis_pid)],
        }
        return per_call(groups, lambda: asyncio.run(_calls(port, token, CONCURRENCY, seconds)))
    finally:
        stop(api)
        stop(worker)


async def _calls(port: int, token: str, clients: int, budget: float) -> int:
    """`clients` connections calling for `budget` seconds (or, with one client, `budget`
    calls); how many calls were made."""
    connections = [await Connection.open("127.0.0.1", port, token) for _ in range(clients)]
    made = 0
    deadline = time.perf_counter() + budget

    async def loop(connection: Connection) -> None:
        nonlocal made
        while (made < budget) if clients == 1 else (time.perf_counter() < deadline):
            status, answer = await connection.post_json("127.0.0.1", "/v1/calls?wait=10", READ_BODY)
            if status != 200 or b'"status":"success"' not in answer:
                raise SystemExit(f"call failed: {status} {answer[:300]!r}")
            made += 1

    try:
        await asyncio.gather(*(loop(connection) for connection in connections))
    finally:
        for connection in connections:
            await connection.close()
    return made


def celery_side(
    env: dict[str, str], logs: Path, seconds: float, redis_pid: int
) -> dict[str, float]:
    argv = [sys.executable, "-m", "celery", "-A", "bench.noop_app", "worker"]
    argv += ["-Q", "tools.read_only", "-c", "2", "-P", "prefork", "--without-gossip"]
    worker = start([*argv, "--without-mingle", "-l", "WARNING"], env, logs / "celery.log")
    os.environ["BENCH_REDIS_URL"] = env["BENCH_REDIS_URL"]
    from bench.noop_app import noop  # noqa: PLC0415 - needs BENCH_REDIS_URL set first

    def once() -> None:
        noop.apply_async(queue="tools.read_only").get(timeout=30)

    def load() -> int:
        made = [0]
        deadline = time.perf_counter() + seconds

        def loop() -> None:
            while time.perf_counter() < deadline:
                once()
                made[0] += 1

        threads = [threading.Thread(target=loop) for _ in range(CONCURRENCY)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return made[0]

    try:
        wait_ready(lambda: once() is None, "celery worker")
        for _ in range(300):
            once()
        groups: Groups = {
            "client": lambda: [psutil.Process()],
            **worker_groups(worker.pid),
            "redis": lambda: [psutil.Process(redis_pid)],
        }
        return per_call(groups, load)
    finally:
        stop(worker)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=8.0, help="measuring time per side")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        server = RedisServer(scratch_path / "redis")
        server.start()
        assert server.process is not None
        redis_pid = server.process.pid
        env = {**os.environ, "BENCH_REDIS_URL": server.url, "PYTHONPATH": CHECKOUT_PATH}
        try:
            celery = celery_side(env, scratch_path, options.seconds, redis_pid)
            toolrun = toolrun_side(env, scratch_path, options.seconds, redis_pid)
        finally:
            server.stop()
    report(celery, toolrun)


def report(celery: dict[str, float], toolrun: dict[str, float]) -> None:
    table = Table(title=f"CPU ms per call, {CONCURRENCY} clients")
    for column in ("process", "toolrun read via the API", "raw Celery no-op"):
        table.add_column(column, justify="right")
    for name in ("client", "api", "worker main", "worker pool", "redis", "total"):
        shown = [f"{side[name]:.2f}" if name in side else "—" for side in (toolrun, celery)]
        table.add_row(name, *shown)
    table.add_row("calls", f"{toolrun['calls']:.0f}", f"{celery['calls']:.0f}")
    Console().print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    facts = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    RESULTS.write_text(json.dumps({"machine": facts, "toolrun": toolrun, "celery": celery}))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

"""Where one call's time goes at one client: a `read` through `POST /v1/calls?wait=10` on
the platform of `platform_roundtrip` (one API process, one worker with two pool
processes, an embedded Redis), split by the timestamps the result itself carries:

- to queued: the request sent → admission records `queued_at` (HTTP, auth, the decisions);
- queued → started: the queueing script, the message to the broker, the worker taking it
  and handing it to a pool process, the start script (`started_at`);
- started → finished: checks, the tool, metering (`finished_at`, set as the ending is
  stored);
- finished → answered: the ending's script, the API's waiter woken, the response read.

Calls are sent one after another (the client's and the services' clocks are the same
machine's). Prints the median and p90 of each part, writes
bench/results/call_timeline.json. Nothing is asserted.

    .venv/bin/python -m bench.call_timeline [--calls 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench._http import Connection
from bench.platform_roundtrip import (
    CHECKOUT_PATH,
    READ_BODY,
    ROOT,
    percentile,
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

RESULTS = ROOT / "bench" / "results" / "call_timeline.json"
PARTS = ("to queued", "queued → started", "started → finished", "finished → answered", "total")


async def timeline(port: int, token: str, calls: int) -> dict[str, list[float]]:
    """Each part's ms for `calls` calls made one after another."""
    connection = await Connection.open("127.0.0.1", port, token)
    parts: dict[str, list[float]] = {name: [] for name in PARTS}
    try:
        status, _answer = await connection.post_json("127.0.0.1", "/v1/calls?wait=60", READ_BODY)
        if status != 200:  # the worker is still starting
            raise SystemExit(f"the worker did not answer: {status}")
        for _ in range(calls):
            sent, clock = time.time(), time.perf_counter()
            status, answer = await connection.post_json("127.0.0.1", "/v1/calls?wait=10", READ_BODY)
            elapsed = time.perf_counter() - clock
            answered = sent + elapsed
            if status != 200:
                raise SystemExit(f"call failed: {status} {answer[:300]!r}")
            facts = json.loads(answer)["metadata"]
            marks = [sent, facts["queued_at"], facts["started_at"], facts["finished_at"], answered]
            for name, begin, end in zip(PARTS, marks, marks[1:], strict=False):
                parts[name].append((end - begin) * 1000)
            parts["total"].append(elapsed * 1000)
    finally:
        await connection.close()
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        workspace = small_workspace(root)
        server = RedisServer(root / "redis")
        server.start()
        env = {
            **{name: value for name, value in os.environ.items() if not name.startswith("OTEL_")},
            "PYTHONPATH": CHECKOUT_PATH,
            "TOOLRUN_REDIS_URL": server.url,
            "TOOLRUN_WORKSPACE": str(workspace),
            "TOOLRUN_HOME": str(root / "home"),
        }
        engine = open_database(Settings(home=root / "home").database)
        _agent, token = AgentStore(engine).create("bench", ceiling=PermissionLevel.READ_ONLY)
        engine.dispose()
        port = free_port()
        me = [sys.executable, "-m", "toolrun"]
        worker = start(
            [*me, "worker", "--level=read_only", "--concurrency=2", "--loglevel=WARNING"],
            env,
            root / "worker.log",
        )
        api = start([*me, "api", f"--port={port}", "--processes=1"], env, root / "api.log")
        try:
            ready = f"http://127.0.0.1:{port}/healthz"
            wait_ready(lambda: httpx.get(ready).status_code == 200, "toolrun API")
            parts = asyncio.run(timeline(port, token, options.calls))
        finally:
            stop(api)
            stop(worker)
            server.stop()
    shown = {
        name: {"p50_ms": statistics.median(values), "p90_ms": percentile(values, 0.9)}
        for name, values in parts.items()
    }
    for name, figures in shown.items():
        print(f"{name:22s} p50 {figures['p50_ms']:7.3f} ms   p90 {figures['p90_ms']:7.3f} ms")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    facts = {"cpus": os.cpu_count(), "load": os.getloadavg(), "calls": options.calls}
    RESULTS.write_text(json.dumps({"machine": facts, "parts": shown}))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

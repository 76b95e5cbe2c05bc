"""Fairness: one agent floods a level of `toolrun up` while others make ordinary calls.

First each bystander makes `--calls` `read` calls one after another on the idle platform;
then the flood agent submits `--flood` `grep` calls on the same level (read_only) from
`--flood-threads` threads without waiting for their results, sending a refused call (429
over a quota, 503 a full queue) again after its Retry-After as the SDK does; meanwhile each
bystander makes its `--calls` `read` calls again, one after another. Prints the
bystanders' p50/p99 idle and during the flood, the flood's throughput (its calls ended per
second, from its first submission until its last call ended) and how many of its
submissions were refused. Writes bench/results/fairness.json. Nothing is asserted.

    .venv/bin/python -m bench.fairness [--flood 5000] [--bystanders 3] [--calls 30]
        [--flood-threads 4] [--ahead N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench.chaos import start_platform, stop_platform
from toolrun.database import open_database
from toolrun.embedded.redis_server import free_port
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "fairness.json"
READ = {"tool_name": "read", "arguments": {"file_path": "notes.txt"}}
GREP = {"tool_name": "grep", "arguments": {"pattern": "fair", "path": "."}}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flood", type=int, default=5000, help="calls the flood submits")
    parser.add_argument("--flood-threads", type=int, default=4)
    parser.add_argument("--bystanders", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30, help="calls each bystander makes")
    parser.add_argument(
        "--ahead",
        type=int,
        default=None,
        help="TOOLRUN_DISPATCH_AHEAD for the platform (a large number: every call goes to "
        "the broker at once, first in first out, as before fair dispatch)",
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project, home = root / "project", root / "home"
        project.mkdir()
        home.mkdir()
        (project / "notes.txt").write_text("fair\n" * 50)
        for index in range(20):
            (project / f"file{index}.txt").write_text("fair share\n" * 100)
        port = free_port()
        settings = {} if options.ahead is None else {"TOOLRUN_DISPATCH_AHEAD": str(options.ahead)}
        up = start_platform(project, home, port, root / "up.log", settings)
        try:
            figures = run(options, f"http://127.0.0.1:{port}", home)
        finally:
            stop_platform(up)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    report(figures)


def run(options: argparse.Namespace, base: str, home: Path) -> dict[str, Any]:
    [state] = (home / ".local" / "state" / "toolrun").glob("project-*")
    engine = open_database(f"sqlite:///{state / 'toolrun.db'}")
    store = AgentStore(engine)
    flood = store.create("flood", ceiling=PermissionLevel.READ_ONLY)[1]
    bystanders = [
        store.create(f"bystander-{index}", ceiling=PermissionLevel.READ_ONLY)[1]
        for index in range(options.bystanders)
    ]
    engine.dispose()

    idle = _bystanding(base, bystanders, options.calls)
    refused: Counter[int] = Counter()
    started = time.monotonic()
    shares = [options.flood // options.flood_threads] * options.flood_threads
    shares[0] += options.flood - sum(shares)
    flooders = [
        threading.Thread(target=_flood, args=(base, flood, share, refused)) for share in shares
    ]
    for thread in flooders:
        thread.start()
    time.sleep(1.0)  # a backlog first
    during = _bystanding(base, bystanders, options.calls)
    for thread in flooders:
        thread.join()
    ended = _drained(base, flood)
    flood_s = ended - started
    return {
        "dispatch_ahead": "default" if options.ahead is None else options.ahead,
        "flood_calls": options.flood,
        "flood_threads": options.flood_threads,
        "bystanders": options.bystanders,
        "calls_each": options.calls,
        "idle_p50_ms": _percentile(idle, 0.5),
        "idle_p99_ms": _percentile(idle, 0.99),
        "flood_p50_ms": _percentile(during, 0.5),
        "flood_p99_ms": _percentile(during, 0.99),
        "flood_max_ms": round(max(during) * 1000, 1),
        "flood_throughput_per_s": round(options.flood / flood_s, 1),
        "flood_seconds": round(flood_s, 1),
        "throttled_429": refused[429],
        "refused_503": refused[503],
        "cores": os.cpu_count(),
        "machine": platform.node(),
    }


def _bystanding(base: str, tokens: list[str], calls: int) -> list[float]:
    """Each bystander's `calls` reads, one after another, all bystanders at once; the
    seconds each took."""
    latencies: list[float] = []
    lock = threading.Lock()

    def bystander(token: str) -> None:
        with _client(base, token) as api:
            for _ in range(calls):
                began = time.monotonic()
                response = api.post("/v1/calls", params={"wait": 60}, json=READ)
                took = time.monotonic() - began
                if response.status_code != 200 or response.json()["status"] != "success":
                    raise SystemExit(f"a bystander's call failed: {response.text}")
                with lock:
                    latencies.append(took)

    threads = [threading.Thread(target=bystander, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def _flood(base: str, token: str, count: int, refused: Counter[int]) -> None:
    """Submit `count` calls without waiting; a refused one again after its Retry-After."""
    with _client(base, token) as api:
        sent = 0
        while sent < count:
            response = api.post("/v1/calls", json=GREP)
            if response.status_code in (429, 503):
                refused[response.status_code] += 1
                time.sleep(float(response.headers.get("retry-after", "1")))
                continue
            if response.status_code not in (200, 202):
                raise SystemExit(f"the flood's call was refused: {response.text}")
            sent += 1


def _drained(base: str, token: str) -> float:
    """When the flood agent had no call queued or running any more."""
    with _client(base, token) as api:
        while api.get("/v1/agents/me").json()["usage"]["in_flight"] > 0:
            time.sleep(0.05)
    return time.monotonic()


def _client(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=90)


def _percentile(latencies: list[float], share: float) -> float:
    ordered = sorted(latencies)
    if share == 0.5:
        return round(statistics.median(ordered) * 1000, 1)
    return round(ordered[int(share * (len(ordered) - 1))] * 1000, 1)


def report(figures: dict[str, Any]) -> None:
    table = Table(title="fairness: one agent floods read_only on toolrun up")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in figures.items():
        table.add_row(name, str(value))
    Console().print(table)


if __name__ == "__main__":
    main()

"""The run state machine's own cost on a large plan: 10,000 nodes, 1,000 roots each with
nine dependents; 1,000 root successes, then (on a fresh run) 1,000 root failures with the
skip policy. Pure Python, no I/O: what the scheduler spends per result, before storing.

Run from the project root: `.venv/bin/python -m bench.dag_bookkeeping`. Nothing is
asserted; results go to bench/results/dag_bookkeeping.json.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from toolrun.dag.plan import parse_plan
from toolrun.dag.run import RunProgress

RESULTS = Path(__file__).resolve().parent / "results" / "dag_bookkeeping.json"
NODES = 10_000
ROOTS = 1_000


def started(policy: str) -> RunProgress:
    nodes = [{"id": f"r{i}", "tool": "t", "on_failure": policy} for i in range(ROOTS)]
    nodes += [
        {"id": f"c{i}", "tool": "t", "depends_on": [f"r{i % ROOTS}"]} for i in range(NODES - ROOTS)
    ]
    run = RunProgress.start(parse_plan({"nodes": nodes}))
    run.promote()
    for i in range(ROOTS):
        run.dispatched(f"r{i}", f"call-{i}", 0.0)
    return run


def main() -> None:
    timings = {}
    run = started("stop")
    began = time.perf_counter()
    for i in range(ROOTS):
        run.succeeded(f"r{i}", None, 1.0)
    timings["1,000 successes"] = time.perf_counter() - began
    run = started("skip")
    began = time.perf_counter()
    for i in range(ROOTS):
        run.failed(f"r{i}", "boom", 1.0, retryable=False)
    timings["1,000 skip failures"] = time.perf_counter() - began
    table = Table(title=f"run bookkeeping, {NODES:,} nodes")
    table.add_column("events")
    table.add_column("seconds", justify="right")
    for name, seconds in timings.items():
        table.add_row(name, f"{seconds:.3f}")
    Console().print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(timings, indent=2) + "\n")
    print(json.dumps({name: round(seconds, 4) for name, seconds in timings.items()}))


if __name__ == "__main__":
    main()

"""Terminal session round trips: `send` a line to a Python REPL then `wait_for` its
answer, and a bare `read`, through the tool in this process (host on a unix socket).

Run from the project root: `.venv/bin/python -m bench.terminal_roundtrip [--calls N]`.
Nothing is asserted; results go to bench/results/terminal_roundtrip.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

from toolrun.config import Settings
from toolrun.permissions.approvals import AutoApprover
from toolrun.terminal.client import HostClient
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult
from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket

RESULTS = Path(__file__).resolve().parent / "results" / "terminal_roundtrip.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="trb-") as scratch:
        settings = Settings(workspace=Path(scratch), home=Path(scratch) / "h")
        ctx = ToolContext.create(settings, approver=AutoApprover())
        executor = Executor(ToolRegistry.with_builtins())

        def call(**arguments: object) -> ToolResult:
            result = executor.execute(ToolCall(tool_name="terminal", arguments=arguments), ctx)
            if not result.ok:
                raise SystemExit(f"terminal failed: {result.error}")
            return result

        started = time.perf_counter()
        session = call(operation="open", command="python3 -q").output["session"]
        call(operation="wait_for", session=session, pattern="^>>> ")
        open_ms = (time.perf_counter() - started) * 1000
        round_trips, reads = [], []
        for value in range(args.calls):
            began = time.perf_counter()
            call(operation="send", session=session, text=f"{value}+1\r")
            call(operation="wait_for", session=session, pattern=f"^{value + 1}$")
            round_trips.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            call(operation="read", session=session)
            reads.append((time.perf_counter() - began) * 1000)
        call(operation="close", session=session)
        pid = HostClient(host_socket(settings), idle_s=HOST_IDLE_S).request(
            {"op": "ping"}, timeout_s=5
        )["pid"]
        os.kill(pid, signal.SIGTERM)
    results = {
        "open_until_prompt_ms": round(open_ms, 1),
        "send_and_answer_p50_ms": round(statistics.median(round_trips), 2),
        "send_and_answer_p95_ms": round(statistics.quantiles(round_trips, n=20)[-1], 2),
        "read_p50_ms": round(statistics.median(reads), 2),
        "calls": args.calls,
    }
    for key, value in results.items():
        print(f"{key:>26}  {value}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""MCP round trips: a `read` through `toolrun mcp --local` (stdio) against the same call
run directly in this process, and a gateway call (`McpProxyTool`, which connects to its
server for each call: a stdio server started per call, or an HTTP server already up).

Run from the project root: `.venv/bin/python -m bench.mcp_roundtrip [--calls N]`.
Nothing is asserted; results go to bench/results/mcp_roundtrip.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from toolrun.config import Settings
from toolrun.interop.mcp_imports import ImportedTool, McpEndpoint, descriptor_of
from toolrun.interop.mcp_proxy import McpProxyTool
from toolrun.permissions.approvals import DenyApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry

RESULTS = Path(__file__).resolve().parent / "results" / "mcp_roundtrip.json"
ECHO = Path(__file__).resolve().parents[1] / "tests" / "interop" / "echo_mcp_server.py"
SAY_HELLO = {
    "name": "sayHello",
    "description": "Greet someone by name.",
    "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    "annotations": {"readOnlyHint": True},
}


def timed(run: Callable[[], object], calls: int) -> dict[str, float]:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        run()
        times.append((time.perf_counter() - began) * 1000)
    quantiles = statistics.quantiles(times, n=20)
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(quantiles[18], 2)}


def through_mcp(workspace: Path, home: Path, calls: int) -> dict[str, Any]:
    toolrun = str(Path(sys.executable).with_name("toolrun"))
    params = StdioServerParameters(
        command=toolrun,
        args=["mcp", "--local", "--workspace", str(workspace)],
        env={"TOOLRUN_HOME": str(home), "PATH": os.environ["PATH"]},
    )

    async def run() -> dict[str, Any]:
        began = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            ready_ms = (time.perf_counter() - began) * 1000
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                result = await client.call_tool("read", {"file_path": "notes.txt"})
                times.append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise SystemExit(f"read failed: {result.content}")
        quantiles = statistics.quantiles(times, n=20)
        return {
            "start_and_list_ms": round(ready_ms, 1),
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(quantiles[18], 2),
        }

    return anyio.run(run)


def proxied(endpoint: McpEndpoint, ctx: ToolContext, calls: int) -> dict[str, float]:
    descriptor = descriptor_of("echo", SAY_HELLO, PermissionLevel.EXECUTE, 30.0)
    tool = McpProxyTool(ImportedTool("sayHello", descriptor), endpoint)
    return timed(lambda: tool.run({"name": "Ada"}, ctx), calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpb-") as scratch:
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("alpha\nbeta\n" * 50)
        settings = Settings(workspace=workspace, home=Path(scratch) / "home")
        ctx = ToolContext.create(settings, approver=DenyApprover())
        executor = Executor(ToolRegistry.with_builtins())
        read = ToolCall(tool_name="read", arguments={"file_path": "notes.txt"})
        results: dict[str, Any] = {
            "read, in this process": timed(lambda: executor.execute(read, ctx), args.calls),
            "read, via toolrun mcp --local (stdio)": through_mcp(
                workspace, Path(scratch) / "home", args.calls
            ),
        }
        stdio = McpEndpoint(command=(sys.executable, str(ECHO)))
        results["gateway call, stdio server started per call"] = proxied(
            stdio, ctx, max(5, args.calls // 10)
        )
        port = 18000 + os.getpid() % 1000
        server = subprocess.Popen(
            [sys.executable, str(ECHO), "http", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    httpx.get(url, timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            results["gateway call, HTTP server"] = proxied(McpEndpoint(url=url), ctx, args.calls)
        finally:
            server.terminate()
            server.wait(10)
    for name, found in results.items():
        print(f"{name:45} {json.dumps(found)}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"calls": args.calls, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Raw Celery no-op round trip vs a toolrun `read` through the API, on the same Redis.

Both sides: prefork workers with -c 2 and toolrun's reliability settings (acks_late,
reject_on_worker_lost, prefetch 1), Redis on loopback, both running for the whole bench
(on queues of their own). Clients: 1 (latency) and 32 concurrent (latency under load,
throughput). At one client the two sides' calls alternate, one by one, so that a change
in this VM's speed during the run (its hours differ by ±30%) falls on both alike. At 32
clients the sides are loaded in turn, in ROUNDS rounds of `seconds / ROUNDS` each, in
the order Celery, toolrun, toolrun, Celery, ... (a drift in speed falls on both alike
here too); a round counts only the calls that end in its steady state: from WARMUP_S
after its clients start to its end (the clients' first calls, and the last ones in
flight when it ends, are not counted). Prints a table, writes
bench/results/platform_roundtrip.json. Nothing is asserted.

    .venv/bin/python -m bench.platform_roundtrip [--seconds 10] [--traces] [--profile DIR]

`--traces` runs the toolrun side with traces on: its processes send their spans by
OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, the SDK's default batching) to a receiver on
loopback in this process, which answers 200 and counts the batches and their bytes
without decoding them; OTEL_METRICS_EXPORTER=none, so only spans are sent.

`--profile DIR` also samples the API and worker processes with py-spy (`pip install
py-spy`; it needs ptrace, e.g. root) while the clients run, and writes their
collapsed stacks to DIR/api.txt and DIR/worker.txt (flamegraph.pl or speedscope read them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench._http import Connection
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.embedded import RedisServer, terminate
from toolrun.embedded.redis_server import free_port
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel

ROOT = Path(__file__).resolve().parents[1]
# The processes a bench starts run this checkout's code (its src/, ahead of whichever
# toolrun the environment has installed: a bench run from another worktree measures that
# worktree) and import the bench package.
CHECKOUT_PATH = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
RESULTS = ROOT / "bench" / "results" / "platform_roundtrip.json"
CONCURRENCY = 32
ROUNDS = 4  # of each side at CONCURRENCY clients, alternated
WARMUP_S = 0.5  # of each round, not counted
API_PROCESSES = int(os.environ.get("BENCH_API_PROCESSES", "1"))
# The call every round-trip bench makes: a `read` of the small file of `small_workspace`.
READ_BODY = {"tool_name": "read", "arguments": {"file_path": "small.txt"}}


def small_workspace(parent: Path) -> Path:
    """`parent`/workspace, holding the small file READ_BODY reads."""
    workspace = parent / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "small.txt").write_text("a small file\n" * 20)
    return workspace


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Steady:
    """The calls of a side's rounds that ended in their steady state: each call's
    latency, and how long the rounds' counted windows lasted together."""

    latencies_s: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0

    def add(self, ended: list[tuple[float, float]], start: float, end: float) -> None:
        """Count the calls of `ended` (when each ended, its latency) that ended from
        `start` to `end`, a window of the round."""
        self.latencies_s += [latency for at, latency in ended if start <= at <= end]
        self.elapsed_s += end - start

    def summary(self) -> dict[str, float]:
        return summary(self.latencies_s, self.elapsed_s)


def summary(latencies_s: list[float], elapsed_s: float) -> dict[str, float]:
    return {
        "requests": len(latencies_s),
        "p50_ms": percentile(latencies_s, 0.50) * 1000,
        "p99_ms": percentile(latencies_s, 0.99) * 1000,
        "mean_ms": statistics.fmean(latencies_s) * 1000,
        "throughput_per_s": len(latencies_s) / elapsed_s,
    }


def start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            argv, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    terminate([process], 15.0)


def wait_ready(check: Any, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.1)
    raise SystemExit(f"{what} did not become ready")


@contextlib.contextmanager
def celery_side(env: dict[str, str], logs: Path) -> Iterator[Any]:
    """A raw Celery worker running, and a function making one no-op round trip (seconds)."""
    os.environ["BENCH_REDIS_URL"] = env["BENCH_REDIS_URL"]
    sys.path.insert(0, str(ROOT))
    from bench.noop_app import NOOP_QUEUE, noop  # noqa: PLC0415 - needs BENCH_REDIS_URL

    worker = start(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "bench.noop_app",
            "worker",
            "-Q",
            NOOP_QUEUE,
            "-c",
            "2",
            "-P",
            "prefork",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "WARNING",
        ],
        env,
        logs / "celery.log",
    )

    def once() -> float:
        started = time.perf_counter()
        noop.apply_async(queue=NOOP_QUEUE).get(timeout=30)
        return time.perf_counter() - started

    try:
        wait_ready(lambda: once() < 30, "celery worker")
        for _ in range(200):
            once()
        yield once
    finally:
        stop(worker)


def run_threads(once: Any, clients: int, seconds: float, into: Steady) -> None:
    """`clients` threads calling `once` for WARMUP_S, then `seconds` counted (`into`)."""
    ended: list[tuple[float, float]] = []
    lock = threading.Lock()
    started = time.perf_counter()
    deadline = started + WARMUP_S + seconds

    def loop() -> None:
        mine = []
        while time.perf_counter() < deadline:
            latency = once()
            mine.append((time.perf_counter(), latency))
        with lock:
            ended.extend(mine)

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    into.add(ended, started + WARMUP_S, deadline)


@dataclass
class SpanSink:
    """What an OTLP/HTTP receiver got on POST /v1/traces: batches and their bytes."""

    url: str = ""
    batches: int = 0
    bytes: int = 0


@contextlib.contextmanager
def span_sink() -> Iterator[SpanSink]:
    """A receiver on loopback that takes span batches, answers 200 and counts them."""
    sink = SpanSink()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the exporter's session expects

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/v1/traces":
                with lock:
                    sink.batches += 1
                    sink.bytes += len(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    sink.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sink
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class ToolrunSide:
    """A toolrun platform running (API and read_only worker) and an agent's token."""

    port: int
    token: str
    api: subprocess.Popen[bytes]
    worker: subprocess.Popen[bytes]


@contextlib.contextmanager
def toolrun_side(
    env: dict[str, str], logs: Path, workspace: Path, traces: SpanSink | None = None
) -> Iterator[ToolrunSide]:
    port = free_port()
    otel = (
        {}
        if traces is None
        else {"OTEL_EXPORTER_OTLP_ENDPOINT": traces.url, "OTEL_METRICS_EXPORTER": "none"}
    )
    toolrun_env = {
        **{name: value for name, value in env.items() if not name.startswith("OTEL_")},
        **otel,
        "TOOLRUN_REDIS_URL": env["BENCH_REDIS_URL"],
        "TOOLRUN_WORKSPACE": str(workspace),
        "TOOLRUN_HOME": str(logs / "home"),
    }
    engine = open_database(Settings(home=logs / "home").database)
    _agent, token = AgentStore(engine).create("bench", ceiling=PermissionLevel.READ_ONLY)
    engine.dispose()
    me = [sys.executable, "-m", "toolrun"]
    worker = start(
        [*me, "worker", "--level=read_only", "--concurrency=2", "--loglevel=WARNING"],
        toolrun_env,
        logs / "worker.log",
    )
    api = start(
        [*me, "api", f"--port={port}", f"--processes={API_PROCESSES}"],
        toolrun_env,
        logs / "api.log",
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(lambda: httpx.get(f"{base}/healthz").status_code == 200, "toolrun API")
        yield ToolrunSide(port, token, api, worker)
    finally:
        stop(api)
        stop(worker)


def sample(process: subprocess.Popen[bytes], into: Path, seconds: float) -> subprocess.Popen[bytes]:
    """py-spy sampling `process` and its children for `seconds` (collapsed stacks)."""
    into.parent.mkdir(parents=True, exist_ok=True)
    beside = Path(sys.executable).with_name("py-spy")  # installed in this environment
    spy = str(beside) if beside.exists() else "py-spy"
    argv = [spy, "record", "--pid", str(process.pid), "--subprocesses", "--format", "raw"]
    argv += ["--duration", str(round(seconds)), "--rate", "250", "--nonblocking", "-o", str(into)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def run_clients(
    celery_once: Any, toolrun: ToolrunSide, seconds: float, profile: Path | None
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Both sides' figures at 1 client (calls alternated) and at 32 (ROUNDS rounds a
    side, alternated): (celery, toolrun)."""
    path, body = "/v1/calls?wait=10", READ_BODY
    port = toolrun.port
    # Opened for each phase and round: uvicorn closes a connection idle for 5 s.
    connections = [await Connection.open("127.0.0.1", port, toolrun.token)]

    async def once(connection: Connection) -> float:
        started = time.perf_counter()
        status, answer = await connection.post_json("127.0.0.1", path, body)
        if status != 200 or b'"status":"success"' not in answer:
            raise SystemExit(f"call failed: {status} {answer[:300]!r}")
        return time.perf_counter() - started

    samplers: list[subprocess.Popen[bytes]] = []
    try:
        first = await connections[0].post_json("127.0.0.1", "/v1/calls?wait=60", body)
        if first[0] != 200:  # the worker is still starting
            raise SystemExit(f"the worker did not answer: {first}")
        for _ in range(200):
            await once(connections[0])
        if profile is not None:
            samplers = [
                sample(process, profile / f"{name}.txt", 4 * seconds + 2 * ROUNDS * WARMUP_S + 5)
                for name, process in (("api", toolrun.api), ("worker", toolrun.worker))
            ]
        # One client: a Celery call, then a toolrun call (this loop has nothing else to do
        # meanwhile, so Celery's blocking client may run on it), for twice `seconds`.
        theirs: list[float] = []
        ours: list[float] = []
        deadline = time.perf_counter() + 2 * seconds
        while time.perf_counter() < deadline:
            theirs.append(celery_once())
            ours.append(await once(connections[0]))
        celery = {"1 client": summary(theirs, sum(theirs))}
        toolrun_figures = {"1 client": summary(ours, sum(ours))}
        await connections.pop().close()
        theirs_loaded, ours_loaded = Steady(), Steady()
        for round_ in range(ROUNDS):
            for side in ("celery", "toolrun") if round_ % 2 == 0 else ("toolrun", "celery"):
                if side == "celery":
                    await asyncio.to_thread(
                        run_threads, celery_once, CONCURRENCY, seconds / ROUNDS, theirs_loaded
                    )
                else:
                    connections += [
                        await Connection.open("127.0.0.1", port, toolrun.token)
                        for _ in range(CONCURRENCY)
                    ]
                    await run_loops(once, connections, seconds / ROUNDS, ours_loaded)
                    while connections:
                        await connections.pop().close()
        label = f"{CONCURRENCY} clients"
        celery[label] = theirs_loaded.summary()
        toolrun_figures[label] = ours_loaded.summary()
        return celery, toolrun_figures
    finally:
        for sampler in samplers:
            sampler.wait()
        for connection in connections:
            await connection.close()


async def run_loops(once: Any, connections: list[Connection], seconds: float, into: Steady) -> None:
    """A client on each of `connections` calling `once` for WARMUP_S, then `seconds`
    counted (`into`): `run_threads`, on this event loop."""
    ended: list[tuple[float, float]] = []
    started = time.perf_counter()
    deadline = started + WARMUP_S + seconds
    await asyncio.gather(*(_loop(once, c, deadline, ended) for c in connections))
    into.add(ended, started + WARMUP_S, deadline)


async def _loop(
    once: Any, connection: Connection, deadline: float, into: list[tuple[float, float]]
) -> None:
    while time.perf_counter() < deadline:
        latency = await once(connection)
        into.append((time.perf_counter(), latency))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring time per case")
    parser.add_argument("--profile", type=Path, help="write py-spy samples of toolrun here")
    parser.add_argument(
        "--traces", action="store_true", help="toolrun sends its spans to a receiver here"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        workspace = small_workspace(scratch_path)
        logs = scratch_path / "logs"
        logs.mkdir()
        server = RedisServer(scratch_path / "redis")
        server.start()
        env = {**os.environ, "BENCH_REDIS_URL": server.url, "PYTHONPATH": CHECKOUT_PATH}
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(span_sink()) if options.traces else None
            try:
                celery_once = stack.enter_context(celery_side(env, logs))
                ours = stack.enter_context(toolrun_side(env, logs, workspace, sink))
                celery, toolrun = asyncio.run(
                    run_clients(celery_once, ours, options.seconds, options.profile)
                )
            finally:
                stack.close()
                server.stop()
    report(celery, toolrun, sink)


def report(
    celery: dict[str, dict[str, float]],
    toolrun: dict[str, dict[str, float]],
    traces: SpanSink | None,
) -> None:
    on = "" if traces is None else ", traces on"
    table = Table(
        title=f"raw Celery no-op round trip vs toolrun read via the API (same Redis, -c 2{on})"
    )
    for column in ("clients", "side", "requests", "p50 ms", "p99 ms", "req/s"):
        table.add_column(column, justify="right")
    for label, c in celery.items():
        t = toolrun[label]
        for side, data in (("celery", c), ("toolrun", t)):
            table.add_row(
                label,
                side,
                f"{data['requests']:.0f}",
                f"{data['p50_ms']:.2f}",
                f"{data['p99_ms']:.2f}",
                f"{data['throughput_per_s']:.0f}",
            )
        table.add_row(
            label,
            "ratio",
            "",
            f"{t['p50_ms'] / c['p50_ms']:.2f}",
            f"{t['p99_ms'] / c['p99_ms']:.2f}",
            f"{t['throughput_per_s'] / c['throughput_per_s']:.2f}",
        )
    console = Console()
    console.print(table)
    console.print("goals: p50 ratio <= 1.3 at 1 and 32 clients, throughput ratio >= 0.8 at 32")
    received = None
    if traces is None:
        console.print("traces: off")
    else:
        received = {"batches": traces.batches, "bytes": traces.bytes}
        console.print(
            f"traces: on, OTLP/HTTP to {traces.url}: {traces.batches} span batches "
            f"({traces.bytes / 1024:.0f} KiB) arrived"
        )
        if traces.batches == 0:
            console.print("no spans arrived: is the OpenTelemetry SDK installed (toolrun[otel])?")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    facts = {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()}
    RESULTS.write_text(
        json.dumps(
            {"machine": facts, "celery": celery, "toolrun": toolrun, "traces": received},
            indent=2,
        )
    )
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

"""The DAG benchmark's support: its Celery canvas baseline and the harness around the
platform's processes (children, the API over http.client, a PostgreSQL schema).

The canvas app has toolrun's Celery settings plus a result backend (chords need one) and
two tasks: `bench.dag.noop` does nothing; `bench.dag.work` does a toolrun worker's part of
a node, `bench_noop` through `WorkerRuntime.run` (call store, executor, history row), as
`toolrun.execute` would, without the API or a scheduler. Its worker:

    BENCH_REDIS_URL=... celery -A bench._dag_support worker -Q tools.read_only -c 2
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import sqlalchemy
from celery import Celery

from toolrun.config import Settings
from toolrun.embedded import terminate
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.loading import registry_with
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.app import create_celery_app
from toolrun.workers.runtime import WorkerRuntime

NOOP_TASK, WORK_TASK = "bench.dag.noop", "bench.dag.work"
TERMINAL = {"succeeded", "failed", "cancelled"}
RUN_TIMEOUT_S = 600.0


def canvas_app(broker: str) -> Celery:
    """toolrun's Celery app on `broker`, with results kept there, and the two tasks."""
    app = create_celery_app(Settings(redis_url=broker))
    app.conf.update(result_backend=broker, task_ignore_result=False, result_expires=600)
    app.task(name=NOOP_TASK)(noop)
    app.task(name=WORK_TASK)(work)
    return app


@cache
def _environment_app() -> Celery:
    return canvas_app(os.environ["BENCH_REDIS_URL"])


def __getattr__(name: str) -> Any:
    """`celery -A bench._dag_support` finds `app` here: the canvas app on BENCH_REDIS_URL."""
    if name == "app":
        return _environment_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def release_results(app: Celery) -> None:
    """Stop waiting on results nobody will read, while Redis still answers.

    Publishing a chord's header subscribes the client to every header task's result; some
    of those waiters outlive the chord, and each unsubscribes when collected, at exit,
    from a server that has stopped by then.
    """
    backend: Any = app.backend
    for waiters in list(backend._pending_results.concrete.values()):  # no public accessor
        for result in list(waiters.values()):
            backend.remove_pending_result(result)


def noop(*_upstream: Any, **_options: Any) -> None:
    """Does nothing: the canvas's own cost is all there is to measure."""


@cache
def _runtime() -> WorkerRuntime:
    """One per pool process, as in a toolrun worker (TOOLRUN_* from the environment)."""
    settings = Settings()
    return WorkerRuntime(settings, PermissionLevel.READ_ONLY, registry_with(settings.tool_modules))


def work(*_upstream: Any, call_id: str | None = None) -> None:
    """Runs `bench_noop` as a toolrun worker runs a call (its record under `call_id`)."""
    call = ToolCall(tool_name="bench_noop", arguments={}, **({"id": call_id} if call_id else {}))
    result = _runtime().run(call, approved_by=None, queued_at=time.time())
    if result is None or result.status is not ToolStatus.SUCCESS:
        raise RuntimeError(f"bench_noop did not succeed: {result}")


class BenchFailure(Exception):
    """A side did not finish its work; the message says what happened."""


def call_times(
    nodes: list[dict[str, Any]], records: list[ToolResult | None], origin: float
) -> dict[str, float]:
    """Means in ms over the nodes whose call record was found, from the workers' times
    (call metadata started_at, finished_at) and, for DAG nodes, the scheduler's (the node's
    started_at: dispatched; finished_at: the end taken in):

    - dep_to_start: start minus the last dependency's finish (a root: minus `origin`)
    - in_worker: finish minus start
    - DAG nodes only: finish_to_seen (the worker's finish to the scheduler taking it in),
      seen_to_dispatch (the last dependency taken in to this node's dispatch; a root: the
      run's creation), dispatch_to_start (to the worker's start)

    `nodes`: id, depends_on and, for DAG nodes, started_at and finished_at; `records`:
    their calls, in the same order.
    """
    times = {
        node["id"]: (record.metadata["started_at"], record.metadata["finished_at"])
        for node, record in zip(nodes, records, strict=True)
        if record is not None and "finished_at" in record.metadata
    }
    seen_at = {node["id"]: node.get("finished_at") for node in nodes if node.get("finished_at")}
    series: dict[str, list[float]] = {}
    for node in nodes:
        if node["id"] not in times:
            continue
        started, finished = times[node["id"]]
        ends = [times[dep][1] for dep in node.get("depends_on", []) if dep in times]
        series.setdefault("dep_to_start", []).append(started - max(ends, default=origin))
        series.setdefault("in_worker", []).append(finished - started)
        if node.get("started_at") is not None and node.get("finished_at") is not None:
            seen = [seen_at[dep] for dep in node.get("depends_on", []) if dep in seen_at]
            dispatched = node["started_at"]
            series.setdefault("finish_to_seen", []).append(node["finished_at"] - finished)
            series.setdefault("seen_to_dispatch", []).append(dispatched - max(seen, default=origin))
            series.setdefault("dispatch_to_start", []).append(started - dispatched)
    facts = {f"{name}_mean_ms": statistics.fmean(v) * 1000 for name, v in series.items()}
    return {"calls_found": len(times), **facts}


@dataclass
class Api:
    """The toolrun API over one keep-alive connection (http.client: httpx's CPU per request
    would compete with the platform on two cores)."""

    port: int
    token: str
    connection: http.client.HTTPConnection = field(init=False)

    def __post_init__(self) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def request(self, method: str, path: str, body: object = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        payload = None if body is None else json.dumps(body)
        try:
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()  # else it stays mid-request and refuses the next one
            raise
        return response.status, json.loads(raw) if raw else None

    def get(self, path: str) -> Any:
        status, body = self.request("GET", path)
        if status != 200:
            raise BenchFailure(f"GET {path} answered {status}: {str(body)[:500]}")
        return body

    def poll(self, run_id: str, full: bool) -> dict[str, Any]:
        """The run: without its nodes (the newest run of the list) unless `full`."""
        if not full:
            runs = self.get("/v1/dags?limit=1")["runs"]
            if runs and runs[0]["id"] == run_id:
                return dict(runs[0])
        return dict(self.get(f"/v1/dags/{run_id}"))

    def run_dag(
        self, plan: dict[str, Any], poll_s: float, full: bool
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Seconds from POST /v1/dags to a poll showing a final status, and the run as
        GET /v1/dags/{id} shows it then (not timed)."""
        self.connection.close()  # the server drops connections idle for 5 s (the canvas's)
        started = time.perf_counter()
        status, run = self.request("POST", "/v1/dags", {"plan": plan})
        if status != 201:
            raise BenchFailure(f"POST /v1/dags answered {status}: {str(run)[:500]}")
        polls = 0
        while run["status"] not in TERMINAL:
            if time.perf_counter() - started > RUN_TIMEOUT_S:
                raise BenchFailure(f"run {run['id']} still {run['status']} after {RUN_TIMEOUT_S} s")
            time.sleep(poll_s)
            run = self.poll(run["id"], full)
            polls += 1
        total = time.perf_counter() - started
        run = self.get(f"/v1/dags/{run['id']}")
        if run["status"] != "succeeded":
            unhappy = [n for n in run["nodes"] if n["state"] != "succeeded"][:5]
            raise BenchFailure(f"run {run['id']} {run['status']}; first other nodes: {unhappy}")
        server = run["finished_at"] - run["created_at"]
        return {"total_s": total, "server_s": server, "polls": polls}, run


@dataclass
class Processes:
    """The benchmark's child processes, each in its own session, logging to a file."""

    logs: Path
    env: dict[str, str]
    running: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, argv: list[str]) -> None:
        with (self.logs / f"{name}.log").open("ab") as log:
            self.running[name] = subprocess.Popen(
                [sys.executable, *argv],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self, *names: str) -> None:
        terminate([self.running.pop(name) for name in names if name in self.running], 15.0)

    def stop_all(self) -> None:
        self.stop(*list(self.running))

    def check(self) -> None:
        for name, process in self.running.items():
            if process.poll() is not None:
                raise BenchFailure(f"{name} exited with {process.returncode}")

    def tails(self, lines: int = 30) -> str:
        parts = []
        for log in sorted(self.logs.glob("*.log")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {log.name} (last {len(text)} lines)\n" + "\n".join(text))
        return "\n".join(parts)


def wait_until(check: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.1)
    raise BenchFailure(f"{what} did not become ready in {timeout_s:g} s")


def scheduler_available() -> bool:
    probe = [sys.executable, "-m", "toolrun", "scheduler", "--help"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


@contextlib.contextmanager
def postgres_schema(url: str | None) -> Iterator[str | None]:
    """A fresh schema bench_<random> on `url`, dropped at the end (None: SQLite)."""
    if url is None:
        yield None
        return
    schema = f"bench_{secrets.token_hex(4)}"
    admin = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sqlalchemy.text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as connection:
            connection.execute(sqlalchemy.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def worker_argv(concurrency: int) -> list[str]:
    level = ["--level=read_only", f"--concurrency={concurrency}", "--loglevel=WARNING"]
    return ["-m", "toolrun", "worker", *level]


def canvas_worker_argv() -> list[str]:
    return [
        *("-m", "celery", "-A", "bench._dag_support", "worker", "-Q", "tools.read_only"),
        *("-c", "2", "-P", "prefork", "--without-gossip", "--without-mingle", "-l", "WARNING"),
    ]

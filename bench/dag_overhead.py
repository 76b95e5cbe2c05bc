"""DAG plans run by toolrun's scheduler vs the same shapes as a Celery canvas (issue 6).

Shapes of N (default 1000) nodes: wide (a root, N-2 parallel nodes, a sink needing all of
them; canvas: chain(root, chord(group, sink))) and deep (a chain of N). toolrun's nodes call
`bench_noop`; the canvas runs them twice, as bare no-op tasks and as tasks doing a toolrun
worker's part of a call (see bench/_dag_support.py). Then 8 independent 1 s `bench_sleep`
nodes on a worker with 8 slots. All processes are real: an embedded Redis (toolrun on db 0,
the canvas on db 1), the API, a read_only worker (-c 2, then -c 8), the scheduler, a Celery
worker (-c 2) with toolrun's settings. Repeats are interleaved; medians are shown.

    .venv/bin/python -m bench.dag_overhead [--repeat 3] [--nodes 1000] [--poll-ms 20]
                                          [--database-url postgresql+psycopg://...]

Prints a table, writes bench/results/dag_overhead.json. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPException
from pathlib import Path
from typing import Any

import celery
import redis
from celery import Celery, chain, chord
from celery.exceptions import CeleryError
from rich.console import Console
from rich.table import Table

from bench._dag_support import (
    NOOP_TASK,
    RUN_TIMEOUT_S,
    WORK_TASK,
    Api,
    BenchFailure,
    Processes,
    call_times,
    canvas_app,
    canvas_worker_argv,
    postgres_schema,
    release_results,
    scheduler_available,
    wait_until,
    worker_argv,
)
from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.embedded import RedisServer
from toolrun.embedded.admin_token import ensure_admin_token
from toolrun.embedded.redis_server import free_port
from toolrun.permissions.agents import AgentStore

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "dag_overhead.json"
OVERHEAD_GOAL = 1.2  # toolrun's per-node time / the canvas's
SLEEP_GOAL_S = 1.3
SLEEP_NODES, SLEEP_S, SLEEP_SLOTS = 8, 1.0, 8
WARM_UPS = 3  # on 2 cores, 8 new pool processes need more than one round
console = Console(width=160)  # the table is wider than a pipe's default 80


def wide_plan(nodes: int, tool: str = "bench_noop") -> dict[str, Any]:
    middle = [f"m{i}" for i in range(nodes - 2)]
    return {
        "nodes": [
            {"id": "root", "tool": tool, "arguments": {}},
            *({"id": m, "tool": tool, "arguments": {}, "depends_on": ["root"]} for m in middle),
            {"id": "sink", "tool": tool, "arguments": {}, "depends_on": middle},
        ],
        "max_concurrency": None,
    }


def deep_plan(nodes: int, tool: str = "bench_noop") -> dict[str, Any]:
    chained = [{"id": "n0", "tool": tool, "arguments": {}}]
    chained += [
        {"id": f"n{i}", "tool": tool, "arguments": {}, "depends_on": [f"n{i - 1}"]}
        for i in range(1, nodes)
    ]
    return {"nodes": chained, "max_concurrency": None}


def sleep_plan(seconds: float) -> dict[str, Any]:
    return {
        "nodes": [
            {"id": f"s{i}", "tool": "bench_sleep", "arguments": {"seconds": seconds}}
            for i in range(SLEEP_NODES)
        ],
        "max_concurrency": None,
    }


def canvas(app: Celery, shape: str, plan: dict[str, Any], task: str, prefix: str | None) -> Any:
    """The plan's shape as a canvas of `task`: chain(root, chord(middle, sink)), or a chain.
    With a `prefix`, each node's call record is stored under PREFIX-NODE_ID."""

    def node(node_id: str) -> Any:
        kwargs = {"call_id": f"{prefix}-{node_id}"} if prefix else {}
        return app.signature(task, kwargs=kwargs, immutable=True)

    ids = [spec["id"] for spec in plan["nodes"]]
    if shape == "wide":
        return chain(node(ids[0]), chord([node(i) for i in ids[1:-1]], node(ids[-1])))
    return chain(*(node(i) for i in ids))


def run_canvas(signature: Any) -> dict[str, float]:
    """Seconds from apply_async to the last task's result."""
    started = time.perf_counter()
    signature.apply_async().get(timeout=RUN_TIMEOUT_S)
    return {"total_s": time.perf_counter() - started}


@dataclass
class Runner:
    """Runs one scenario at a time and keeps its sample under "shape/side"."""

    processes: Processes
    app: Celery
    calls: CallStore  # toolrun's call records: the workers' start and finish times
    poll_s: float
    full_poll: bool
    api: Api | None = None
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def record(self, key: str, run: Callable[[], dict[str, Any]]) -> None:
        self.processes.check()
        sample = run()
        if not key.startswith("warm-up"):
            self.samples.setdefault(key, []).append(sample)

    def canvas(self, key: str, shape: str, plan: dict[str, Any], task: str) -> None:
        prefix = f"canvas-{secrets.token_hex(4)}" if task == WORK_TASK else None
        signature = canvas(self.app, shape, plan, task, prefix)

        def run() -> dict[str, Any]:
            submitted = time.time()
            sample = run_canvas(signature)
            if prefix is not None:
                ids = [f"{prefix}-{spec['id']}" for spec in plan["nodes"]]
                sample |= call_times(plan["nodes"], self.calls.get_many(ids), submitted)
            return sample

        self.record(key, run)

    def dag(self, key: str, plan: dict[str, Any]) -> None:
        api = self.api
        if api is None:
            return

        def run() -> dict[str, Any]:
            sample, state = api.run_dag(plan, self.poll_s, self.full_poll)
            records = self.calls.get_many([node["call_id"] or "" for node in state["nodes"]])
            return sample | call_times(state["nodes"], records, state["created_at"])

        self.record(key, run)


def platform_env(
    scratch: Path, toolrun_url: str, canvas_url: str, database_url: str | None
) -> dict[str, str]:
    """What every child process gets: the two Redis databases, a fresh home and workspace."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "bench"), str(ROOT)]),
        "BENCH_REDIS_URL": canvas_url,
        "TOOLRUN_REDIS_URL": toolrun_url,
        "TOOLRUN_WORKSPACE": str(scratch / "workspace"),
        "TOOLRUN_HOME": str(scratch / "home"),
        "TOOLRUN_TOOL_MODULES": '["toolrun_benchtools"]',
        **({"TOOLRUN_DATABASE_URL": database_url} if database_url else {}),
    }


def run_scenarios(runner: Runner, options: argparse.Namespace) -> None:
    """Warm-ups, then the no-op shapes interleaved, then the sleep plan on 8 slots."""
    ping = runner.app.signature(NOOP_TASK)
    wait_until(lambda: ping.apply_async().get(timeout=5) is None, "the Celery worker")
    for _ in range(WARM_UPS):  # every pool process has run each kind of node
        for task in (NOOP_TASK, WORK_TASK):
            runner.canvas("warm-up", "wide", wide_plan(20), task)
        runner.dag("warm-up", wide_plan(20))
    plans = {"wide": wide_plan(options.nodes), "deep": deep_plan(options.nodes)}
    for _ in range(options.repeat):
        for shape, plan in plans.items():
            runner.canvas(f"{shape}/canvas", shape, plan, NOOP_TASK)
            runner.canvas(f"{shape}/canvas_work", shape, plan, WORK_TASK)
            runner.dag(f"{shape}/toolrun", plan)
    if runner.api is not None:
        runner.processes.stop("worker")
        runner.processes.start("worker", worker_argv(SLEEP_SLOTS))
        for _ in range(WARM_UPS):  # a pool process's first calls open its connections
            runner.dag("warm-up", sleep_plan(0.2))
        for _ in range(options.repeat):
            runner.dag("sleep/toolrun", sleep_plan(SLEEP_S))


def measure(options: argparse.Namespace, scratch: Path, database_url: str | None) -> dict[str, Any]:
    """Every scenario's samples; toolrun's only when the scheduler exists."""
    (scratch / "logs").mkdir()
    (scratch / "workspace").mkdir()
    server = RedisServer(scratch / "redis")
    server.start()
    canvas_url = server.url.removesuffix("/0") + "/1"
    app = canvas_app(canvas_url)
    settings = Settings(home=scratch / "home", database_url=database_url)
    engine = open_database(settings.database)
    ensure_admin_token(AgentStore(engine), settings.admin_token_path)
    engine.dispose()
    processes = Processes(
        scratch / "logs", platform_env(scratch, server.url, canvas_url, database_url)
    )
    calls = CallStore(redis.Redis.from_url(server.url), ttl_s=settings.call_ttl_s)
    runner = Runner(processes, app, calls, options.poll_ms / 1000, options.full_poll)
    outcome: dict[str, Any] = {"samples": runner.samples, "error": None}
    with_dag = not options.canvas_only and scheduler_available()
    if not with_dag:
        outcome["error"] = "toolrun not run: no `python -m toolrun scheduler` (or --canvas-only)"
    try:
        processes.start("celery", canvas_worker_argv())
        if with_dag:
            port = free_port()
            processes.start("worker", worker_argv(2))
            processes.start("api", ["-m", "toolrun", "api", f"--port={port}"])
            processes.start("scheduler", ["-m", "toolrun", "scheduler"])
            api = Api(port, settings.admin_token_path.read_text().strip())
            wait_until(lambda: api.request("GET", "/healthz")[0] == 200, "the API")
            runner.api = api
        run_scenarios(runner, options)
    except (BenchFailure, CeleryError, OSError, HTTPException, KeyError) as exc:
        outcome["error"] = f"{type(exc).__name__}: {exc}"
        outcome["logs"] = processes.tails()
        console.print(f"[red]failed:[/] {exc}\n{outcome['logs']}", highlight=False)
    finally:
        release_results(app)
        calls.client.close()
        processes.stop_all()
        server.stop()
    return outcome


def summarise(samples: dict[str, list[dict[str, Any]]], nodes: int) -> dict[str, dict[str, Any]]:
    """Medians per scenario; per-node ms = median total / nodes."""
    summary = {}
    for key, runs in samples.items():
        count = SLEEP_NODES if key.startswith("sleep/") else nodes
        totals = [run["total_s"] for run in runs]
        entry: dict[str, Any] = {
            "nodes": count,
            "total_s_median": statistics.median(totals),
            "total_s_min": min(totals),
            "total_s_max": max(totals),
            "per_node_ms": statistics.median(totals) / count * 1000,
        }
        for fact in sorted(set().union(*runs) - {"total_s"}):
            values = [run[fact] for run in runs if run.get(fact) is not None]
            if values:
                entry[f"{fact}_median"] = statistics.median(values)
        summary[key] = {**entry, "runs": runs}
    for shape in ("wide", "deep"):
        mine = summary.get(f"{shape}/toolrun")
        for side in ("canvas", "canvas_work"):
            theirs = summary.get(f"{shape}/{side}")
            if mine is not None and theirs is not None:
                ratio = mine["per_node_ms"] / theirs["per_node_ms"]
                mine[f"ratio_to_{side}"] = ratio
                mine[f"goal_met_vs_{side}"] = ratio <= OVERHEAD_GOAL
    if "sleep/toolrun" in summary:
        sleep = summary["sleep/toolrun"]
        sleep["goal_met"] = sleep["total_s_median"] <= SLEEP_GOAL_S
    return summary


SIDES = {
    "canvas": "canvas, bare no-op",
    "canvas_work": "canvas, worker's work",
    "toolrun": "toolrun DAG",
}


def report(summary: dict[str, dict[str, Any]], options: argparse.Namespace) -> Table:
    table = Table(title=f"DAG overhead: toolrun plans vs Celery canvas ({options.database})")
    columns = ("scenario", "side", "nodes", "total s", "min s", "per-node ms", "ratio", "goal")
    for column in (*columns, "server s", "dep→start ms", "in worker ms"):
        table.add_column(column, justify="left" if column in {"scenario", "side"} else "right")

    def cell(entry: dict[str, Any], key: str, fmt: str) -> str:
        return format(entry[key], fmt) if key in entry else ""

    for key, entry in summary.items():
        shape, side = key.split("/")
        goal = ""
        if shape == "sleep":
            goal = f"{'yes' if entry['goal_met'] else 'no'} (≤ {SLEEP_GOAL_S} s)"
        table.add_row(
            shape,
            SIDES[side],
            str(entry["nodes"]),
            f"{entry['total_s_median']:.3f}",
            f"{entry['total_s_min']:.3f}",
            "" if shape == "sleep" else f"{entry['per_node_ms']:.3f}",
            "",
            goal,
            cell(entry, "server_s_median", ".3f"),
            cell(entry, "dep_to_start_mean_ms_median", ".2f"),
            cell(entry, "in_worker_mean_ms_median", ".2f"),
        )
        for base in ("canvas", "canvas_work"):
            if f"ratio_to_{base}" in entry:
                met = "yes" if entry[f"goal_met_vs_{base}"] else "no"
                ratio = f"{entry[f'ratio_to_{base}']:.2f}"
                label = f"toolrun ÷ {SIDES[base]}"
                goal = f"{met} (≤ {OVERHEAD_GOAL}x)"
                table.add_row(shape, label, "", "", "", "", ratio, goal, "", "", "")
    return table


def machine_facts(options: argparse.Namespace) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "celery": celery.__version__,
        "platform": platform.platform(),
        "load_start": os.getloadavg(),
        "database": options.database,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per scenario")
    parser.add_argument("--nodes", type=int, default=1000, help="nodes of the wide/deep plans")
    parser.add_argument("--poll-ms", type=float, default=20.0, help="status poll interval")
    parser.add_argument(
        "--full-poll",
        action="store_true",
        help="poll GET /v1/dags/{id} (every node) instead of GET /v1/dags?limit=1",
    )
    parser.add_argument("--database-url", help="PostgreSQL URL (default: SQLite in a temp home)")
    parser.add_argument("--canvas-only", action="store_true", help="skip the toolrun side")
    options = parser.parse_args()
    options.database = "postgresql" if options.database_url else "sqlite"
    facts = machine_facts(options)
    with tempfile.TemporaryDirectory() as scratch, postgres_schema(options.database_url) as url:
        outcome = measure(options, Path(scratch), url)
    summary = summarise(outcome["samples"], options.nodes)
    console.print(report(summary, options))
    poll = "GET /v1/dags/{id}" if options.full_poll else "GET /v1/dags?limit=1"
    console.print(
        "total s: median of the runs, from submitting (POST /v1/dags; apply_async) to seeing "
        f"the end ({poll} every {options.poll_ms:g} ms; the sink's or last task's result); "
        "per-node ms = total / nodes; ratio: of the per-node ms. server s: the run's "
        "finished_at - created_at. From the workers' call records (toolrun's runs and the "
        "canvas's worker-work tasks), means over the nodes: dep→start = a call's start minus "
        "its last dependency's finish (wide: includes waiting for one of the 2 slots), "
        "in worker = finish minus start.",
        highlight=False,
    )
    if outcome["error"]:
        console.print(f"[yellow]{outcome['error']}[/]", highlight=False)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    settings = {
        "nodes": options.nodes,
        "repeat": options.repeat,
        "poll_ms": options.poll_ms,
        "worker_concurrency": {"noop": 2, "sleep": SLEEP_SLOTS},
        "goals": {"per_node_ratio_max": OVERHEAD_GOAL, "sleep_total_s_max": SLEEP_GOAL_S},
    }
    facts["load_end"] = os.getloadavg()
    document = {"machine": facts, "settings": settings, "results": summary, **outcome}
    document.pop("samples")
    RESULTS.write_text(json.dumps(document, indent=2))
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

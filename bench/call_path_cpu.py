"""CPU per call of toolrun's own code on the call path, in one process, without HTTP or
Celery's worker: `Lifecycle.admit` of an agent's `read` (the API's part: decisions, the
queueing script, the message sent to the broker) and `WorkerRuntime.run` of its envelope
(a pool process's part: its task events, start, checks, the tool, the ending with its
pump), against an embedded Redis and a SQLite database. One process and no contention,
so it moves less from run to run than `call_cpu.py` and shows what a change to this code
saves.

Workers are declared with room for every call, so each admission sends its message; the
runs find nothing waiting. Prints CPU and wall ms per call (the median of `--rounds`),
writes bench/results/call_path_cpu.json. Nothing is asserted.

    .venv/bin/python -m bench.call_path_cpu [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import redis

from bench.platform_roundtrip import ROOT, small_workspace
from toolrun.calls import keys
from toolrun.calls.envelope import Envelope
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import fair_publisher, platform_endings, platform_lifecycle
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.embedded import RedisServer
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.app import create_celery_app
from toolrun.workers.messages import EXECUTE_TASK
from toolrun.workers.presence import Presence
from toolrun.workers.runtime import WorkerRuntime
from toolrun.workers.task_events import TaskEvents

RESULTS = ROOT / "bench" / "results" / "call_path_cpu.json"
WARM_UP = 200
WORKER = "read_only@bench"


def per_call(step: Callable[[int], object], count: int) -> tuple[float, float]:
    """(CPU ms, wall ms) per call of `step(0..count-1)`."""
    cpu, wall = time.process_time(), time.perf_counter()
    for index in range(count):
        step(index)
    return (
        (time.process_time() - cpu) * 1000 / count,
        (time.perf_counter() - wall) * 1000 / count,
    )


def one_round(url: str, home: Path, calls: int) -> dict[str, float]:
    client = redis.Redis.from_url(url)
    client.flushdb()
    workspace = small_workspace(home)
    settings = Settings(redis_url=url, home=home, workspace=workspace, network_isolation="off")
    engine = open_database(settings.database)
    agents = AgentStore(engine)
    _profile, token = agents.create(f"bench-{time.time_ns()}", ceiling=PermissionLevel.READ_ONLY)
    agent = agents.authenticate(token)
    assert agent is not None  # made just above
    registry = ToolRegistry.with_builtins()
    celery = create_celery_app(settings)
    endings = platform_endings(settings, CallStore(client, ttl_s=600), history=None)
    lifecycle = platform_lifecycle(
        settings, registry, client=client, database=engine, celery=celery, ended=endings
    )
    queue = PermissionLevel.READ_ONLY.queue_name
    Presence(client, "bench", ttl_s=600, machine_key=None, queue=queue, slots=10**6).renew()
    made = [
        ToolCall(tool_name="read", arguments={"file_path": "small.txt"}, agent_id=agent.id)
        for _ in range(WARM_UP + calls)
    ]
    for call in made[:WARM_UP]:
        lifecycle.admit(call, agent, metered=True)
    admit_cpu, admit_wall = per_call(
        lambda i: lifecycle.admit(made[WARM_UP + i], agent, metered=True), calls
    )
    envelopes = [
        Envelope.model_validate_json(raw)
        for raw in client.hmget(keys.SENT_ENVELOPES, [call.id for call in made])
        if raw is not None
    ]
    runtime = WorkerRuntime(settings, PermissionLevel.READ_ONLY, registry)
    publisher = fair_publisher(settings, client, celery)
    events = TaskEvents(celery)

    def run(envelope: Envelope) -> None:
        # The fields a pool process's task request has, as `workers.tasks` reads them.
        request = SimpleNamespace(
            hostname=WORKER, id=envelope.call.id, shadow=None, argsrepr="[{...}]",
            kwargsrepr="{}", root_id=envelope.call.id, parent_id=None, retries=0, eta=None,
            expires=None,
        )  # fmt: skip
        received = events.received(EXECUTE_TASK, request)
        delivery = events.delivery(envelope.call.id, WORKER, received)
        runtime.run(envelope, next_calls=publisher, events=delivery)

    for envelope in envelopes[:WARM_UP]:
        run(envelope)
    ran = envelopes[WARM_UP:]
    run_cpu, run_wall = per_call(lambda i: run(ran[i]), len(ran))
    client.flushdb()
    celery.close()
    engine.dispose()
    return {
        "admit_cpu_ms": admit_cpu,
        "admit_wall_ms": admit_wall,
        "run_cpu_ms": run_cpu,
        "run_wall_ms": run_wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="calls measured per round")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        server = RedisServer(Path(scratch) / "redis")
        server.start()
        try:
            rounds = [
                one_round(server.url, Path(scratch) / f"home{n}", options.calls)
                for n in range(options.rounds)
            ]
        finally:
            server.stop()
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    for name, value in medians.items():
        print(f"{name:14s} {value:.3f}   rounds: {', '.join(f'{r[name]:.3f}' for r in rounds)}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    facts = {"cpus": os.cpu_count(), "load": os.getloadavg(), "calls": options.calls}
    RESULTS.write_text(json.dumps({"machine": facts, "median": medians, "rounds": rounds}))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

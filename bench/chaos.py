"""Chaos: agents calling `toolrun up` while pool processes, worker main processes and the
scheduler are killed with SIGKILL at random, and the platform's Redis server at set moments.

Each agent submits, under ids of its own, a mix of `read`, `grep`, `write`, `bash` that
appends its call id to a ledger file (a side effect that must happen at most once: bash
is not safe to run twice) and a slow `bash` (2 s), and waits for each result; a call the
platform does not answer (a connection error or a 5xx, as while Redis restarts) is sent
again under its id, as an agent framework would. After the load, every accepted call has
three minutes to be final. Prints the calls, lost (no record), stuck (not final after
those minutes), second runs (a ledger id twice: none may happen unannounced), missing
history rows, restarts by the supervisor, and the latency of calls (p50/p99). Writes
bench/results/chaos.json. Nothing is asserted.

    .venv/bin/python -m bench.chaos [--agents 12] [--seconds 120] [--kill-every 5]
        [--redis-kills 1] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from rich.console import Console
from rich.table import Table

from toolrun.database import open_database
from toolrun.embedded.redis_server import free_port
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "chaos.json"
SETTLE_S = 180
RESENDS = 20
FINAL = {"success", "error", "timeout", "blocked", "denied", "cancelled"}


@dataclass
class Ledger:
    """What the agents sent and saw (thread-safe)."""

    accepted: dict[str, str] = field(default_factory=dict)  # call id → kind
    latencies_s: list[float] = field(default_factory=list)
    refused: int = 0
    unanswered: dict[str, str] = field(default_factory=dict)  # sent, no 200/202: id → kind
    lock: threading.Lock = field(default_factory=threading.Lock)


def start_platform(
    project: Path, home: Path, port: int, log: Path, settings: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`toolrun up` on `project` as a new user whose home is `home`; `settings`: TOOLRUN_*
    variables for it (no others are passed on)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("TOOLRUN_") and key != "XDG_STATE_HOME"
    }
    env |= {"HOME": str(home), "TOOLRUN_AUTO_APPROVE": "true", **(settings or {})}
    with log.open("wb") as sink:
        up = subprocess.Popen(
            [sys.executable, "-m", "toolrun", "up", f"--port={port}"],
            cwd=project,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 120
    while b"Ctrl-C stops everything" not in log.read_bytes():
        if up.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"toolrun up did not start; see {log}")
        time.sleep(0.2)
    return up


def agent_loop(base: str, token: str, deadline: float, seen: Ledger, rng: random.Random) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as api:
        while time.monotonic() < deadline:
            call_id = f"chaos-{uuid.uuid4().hex[:16]}"
            kind, tool, arguments = _pick(rng, call_id)
            body = {"id": call_id, "tool_name": tool, "arguments": arguments}
            started = time.monotonic()
            response = _submit(api, body)
            if response is None or response.status_code not in (200, 202):
                with seen.lock:
                    seen.refused += 1
                    seen.unanswered[call_id] = kind  # it may have been accepted all the same
                continue
            with seen.lock:
                seen.accepted[call_id] = kind
            if response.status_code == 200:
                with seen.lock:
                    seen.latencies_s.append(time.monotonic() - started)


def _submit(api: httpx.Client, body: dict[str, Any]) -> httpx.Response | None:
    """POST the call, sent again under its id while the platform does not answer (a
    connection error or a 5xx, as while Redis restarts): the same id and body answer with
    the call already made, never a second one."""
    response = None
    for _ in range(RESENDS):
        with contextlib.suppress(httpx.HTTPError):
            response = api.post("/v1/calls", params={"wait": 30}, json=body)
            if response.status_code < 500:
                return response
        time.sleep(0.5)
    return response


def _pick(rng: random.Random, call_id: str) -> tuple[str, str, dict[str, Any]]:
    roll = rng.random()
    if roll < 0.35:
        return "read", "read", {"file_path": "notes.txt"}
    if roll < 0.55:
        return "grep", "grep", {"pattern": "chaos", "path": "."}
    if roll < 0.70:
        return "write", "write", {"file_path": f"out/{call_id}.txt", "content": call_id}
    if roll < 0.95:
        return "ledger", "bash", {"command": f"echo {call_id} >> ledger.txt"}
    return "slow", "bash", {"command": f"echo {call_id} >> ledger.txt && sleep 2"}


def killer(
    up: psutil.Process,
    deadline: float,
    options: argparse.Namespace,
    rng: random.Random,
    kills: Counter[str],
) -> None:
    """A random victim every `--kill-every` seconds; the platform's Redis at evenly spaced
    moments (`--redis-kills`)."""
    started = time.monotonic()
    span = deadline - started
    redis_at = [
        started + span * (n + 1) / (options.redis_kills + 1) for n in range(options.redis_kills)
    ]
    while time.monotonic() < deadline:
        time.sleep(options.kill_every)
        children = up.children()
        if redis_at and time.monotonic() >= redis_at[0]:
            redis_at.pop(0)
            kind, pool = "redis", [p for p in children if "redis-server" in _command(p)]
        else:
            kind, pool = _random_victims(children, rng)
        if not pool:
            continue
        victim = rng.choice(pool)
        with contextlib.suppress(psutil.Error):
            victim.send_signal(signal.SIGKILL)
            kills[kind] += 1


def _random_victims(
    children: list[psutil.Process], rng: random.Random
) -> tuple[str, list[psutil.Process]]:
    workers = [p for p in children if "worker" in _command(p)]
    roll = rng.random()
    if roll < 0.6:
        return "pool process", [child for worker in workers for child in worker.children()]
    if roll < 0.85:
        return "worker main process", workers
    return "scheduler", [p for p in children if _command(p).endswith(" scheduler")]


def _command(process: psutil.Process) -> str:
    """`process`'s command line ("" for one gone, or a zombie not yet reaped)."""
    with contextlib.suppress(psutil.Error):
        return " ".join(process.cmdline())
    return ""


def settle(
    base: str, token: str, ids: list[str], *, patient: bool = True
) -> dict[str, dict[str, Any]]:
    """Each call's last state ({} where the platform knows none), polled until all are
    final or SETTLE_S has passed (`patient`), else read once."""
    headers = {"Authorization": f"Bearer {token}"}
    states: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + (SETTLE_S if patient else 0)
    with httpx.Client(base_url=base, headers=headers, timeout=30) as api:
        pending = list(ids)
        while pending:
            still = []
            for call_id in pending:
                response = api.get(f"/v1/calls/{call_id}")
                states[call_id] = response.json() if response.status_code in (200, 202) else {}
                if states[call_id].get("status") not in FINAL:
                    still.append(call_id)
            pending = still
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(1)
    return states


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agents", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--kill-every", type=float, default=5.0, help="seconds between kills")
    parser.add_argument("--redis-kills", type=int, default=1, help="kills of the Redis server")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    rng = random.Random(options.seed)  # noqa: S311 - a reproducible load, no secret
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project, home = root / "project", root / "home"
        (project / "out").mkdir(parents=True)
        home.mkdir()
        (project / "notes.txt").write_text("chaos\n" * 50)
        port = free_port()
        up = start_platform(project, home, port, root / "up.log")
        base = f"http://127.0.0.1:{port}"
        try:
            report(run(options, rng, up, base, project, home))
        finally:
            stop_platform(up)


def stop_platform(up: subprocess.Popen[bytes]) -> None:
    """Ctrl-C for `toolrun up`, and SIGKILL for all it started if it has not stopped in
    a minute."""
    up.send_signal(signal.SIGINT)
    try:
        up.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(up.pid, signal.SIGKILL)


def run(
    options: argparse.Namespace,
    rng: random.Random,
    up: subprocess.Popen[bytes],
    base: str,
    project: Path,
    home: Path,
) -> dict[str, Any]:
    [state] = (home / ".local" / "state" / "toolrun").glob("project-*")
    engine = open_database(f"sqlite:///{state / 'toolrun.db'}")
    tokens = [
        AgentStore(engine).create(f"chaos-{index}", ceiling=PermissionLevel.EXECUTE)[1]
        for index in range(options.agents)
    ]
    engine.dispose()
    seen, kills = Ledger(), Counter[str]()
    deadline = time.monotonic() + options.seconds
    threads = [
        threading.Thread(
            target=agent_loop,
            args=(base, token, deadline, seen, random.Random(rng.random())),  # noqa: S311
        )
        for token in tokens
    ]
    threads.append(
        threading.Thread(
            target=killer,
            args=(psutil.Process(up.pid), deadline, options, rng, kills),
        )
    )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    load_ended = time.monotonic()
    admin = (state / "admin.token").read_text().strip()
    # A call sent but never answered counts once the platform knows it.
    known = settle(base, admin, list(seen.unanswered), patient=False)
    seen.accepted |= {i: kind for i, kind in seen.unanswered.items() if known.get(i)}
    ids = list(seen.accepted)
    states = settle(base, admin, ids)
    settled_s = time.monotonic() - load_ended
    ledger_file = project / "ledger.txt"
    ledger = Counter(ledger_file.read_text().split() if ledger_file.exists() else [])
    final_ids = [i for i in ids if states.get(i, {}).get("status") in FINAL]
    time.sleep(2)  # the outbox drainers write within a moment
    with contextlib.closing(sqlite3.connect(state / "toolrun.db")) as db:
        rows = {row[0] for row in db.execute("SELECT call_id FROM call_history")}
    health = httpx.get(f"{base}/healthz", timeout=10).json()
    check = httpx.post(
        f"{base}/v1/calls",
        params={"wait": 30},
        json={"tool_name": "read", "arguments": {"file_path": "notes.txt"}},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=40,
    )
    restarts = sum(p.get("restarts", 0) for p in (health.get("processes") or {}).values())
    latencies = sorted(seen.latencies_s)
    statuses = Counter(states.get(i, {}).get("status", "lost") for i in ids)
    return {
        "agents": options.agents,
        "seconds": options.seconds,
        "accepted": len(ids),
        "refused": seen.refused,
        "unanswered_but_accepted": sum(1 for i in seen.unanswered if i in seen.accepted),
        "statuses": dict(statuses),
        "lost": sum(1 for i in ids if not states.get(i)),
        "stuck": sum(1 for i in ids if states.get(i) and i not in final_ids),
        "stuck_calls": {
            i: {
                "kind": seen.accepted[i],
                "status": states[i].get("status"),
                **{
                    key: states[i].get("metadata", {}).get(key)
                    for key in ("worker_id", "deliveries", "queued_at", "started_at")
                },
            }
            for i in ids
            if states.get(i) and i not in final_ids
        },
        "second_runs": sum(1 for count in ledger.values() if count > 1),
        "missing_history_rows": len(set(final_ids) - rows),
        "kills": dict(kills),
        "restarts": restarts,
        "settled_after_load_s": round(settled_s, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))] * 1000, 1)
        if latencies
        else None,
        "still_serving": check.status_code == 200 and check.json()["status"] == "success",
        "machine": platform.node(),
    }


def report(figures: dict[str, Any]) -> None:
    table = Table(title="chaos: agents against toolrun up, kill -9 at random")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    Console().print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

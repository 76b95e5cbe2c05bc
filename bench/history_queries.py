"""Call history at scale: load, statistics, filtered queries, export and slow-tool analysis
over N history rows, on SQLite and PostgreSQL.

Run from the project root: `.venv/bin/python -m bench.history_queries [--rows N]
[--database sqlite|postgresql|both]` (`make bench`; default 1,000,000 rows, both). SQLite is a
temporary file opened with `open_database`; PostgreSQL is POSTGRES_URL, in a schema of its own
that is dropped at the end (skipped when the server does not answer). The tables and
bench/results/history_queries.json give what was measured; nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import sqlalchemy
from rich.console import Console
from rich.table import Table
from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.history.analysis import slow_tools
from toolrun.history.export import ExportFormat, export
from toolrun.history.records import CallRecord
from toolrun.history.rollups import CallRollup, RolledHour
from toolrun.history.stats import HistoryStats
from toolrun.history.store import HistoryFilter, HistoryStore
from toolrun.selection.preferences import Preferences

RESULTS = Path(__file__).resolve().parent / "results" / "history_queries.json"
POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SPAN_S = 7 * 24 * 3600  # the rows' calls ended over the 7 days ...
END_AGO_S = 600  # ... that end 10 minutes before the load
LOAD_BATCH = 10_000
LIVE_BATCH = 500  # HistoryWriter's max_batch
WARM_CALLS = 20
QUERY_RUNS = 20
ANALYSIS_RUNS = 5
STATS_GOAL_MS = 200.0
SLOW_CALL_MS = Settings.model_fields["slow_call_ms"].default
WINDOWS = {"1 h": 3600, "24 h": 24 * 3600, "7 d (all rows)": SPAN_S + 3600}
STATUSES = (("success", 0.90), ("error", 0.08), ("timeout", 0.02))
VERSIONS = (("1.0.0", 0.3), ("1.1.0", 0.7))
AGENTS = 50
SEED = 20240501

Arguments = Callable[[random.Random], dict[str, Any]]
_DIRECTORIES = ("src/app", "src/app/api", "tests", "docs")
_PATTERNS = ("def \\w+\\(self", "TODO", "import requests", "class .*Error", "fo", "useState")
_COMMANDS = ("pytest -q tests", "git status", "ls -la", "make build", "npm test", "python x.py")
_HOSTS = ("docs.python.org", "api.github.com", "pypi.org", "developer.mozilla.org")


def _file(rng: random.Random) -> str:
    return f"{rng.choice(_DIRECTORIES)}/module_{rng.randrange(200)}.py"


@dataclass(frozen=True)
class ToolProfile:
    """How a tool's calls look: share of calls, lognormal time, memory, CPU, arguments."""

    name: str
    share: float
    median_ms: float
    sigma: float
    timeout_s: float
    rss_mb: float
    cpu_share: float  # CPU seconds per wall-clock second
    level: str
    arguments: Arguments


TOOLS = (
    ToolProfile(
        "read", 0.24, 2.5, 0.9, 30, 40, 0.8, "read_only",
        lambda r: {"file_path": _file(r), "offset": r.choice((0, 0, 2000)), "limit": 2000},
    ),
    ToolProfile(
        "grep", 0.16, 35, 1.3, 30, 30, 0.7, "read_only",
        lambda r: {"pattern": r.choice(_PATTERNS), "path": r.choice((".", "src", "tests"))},
    ),
    ToolProfile(
        "glob", 0.09, 12, 1.0, 30, 25, 0.6, "read_only",
        lambda r: {"pattern": r.choice(("**/*.py", "src/**/*.ts", "*.md")), "path": "."},
    ),
    ToolProfile(
        "bash", 0.15, 450, 1.6, 120, 120, 0.5, "execute",
        lambda r: {"command": r.choice(_COMMANDS), "timeout": 120},
    ),
    ToolProfile(
        "http_fetch", 0.07, 380, 0.9, 30, 60, 0.1, "execute",
        lambda r: {"url": f"https://{r.choice(_HOSTS)}/page/{r.randrange(500)}"},
    ),
    ToolProfile(
        "edit", 0.10, 4, 0.6, 30, 35, 0.9, "read_write",
        lambda r: {"file_path": _file(r), "old_string": "x = 1", "new_string": "x = 2"},
    ),
    ToolProfile(
        "write", 0.06, 5, 0.6, 30, 35, 0.9, "read_write",
        lambda r: {"file_path": _file(r), "content": "print('hello')\n" * r.randrange(1, 4)},
    ),
    ToolProfile(
        "web_search", 0.05, 900, 0.7, 30, 50, 0.05, "execute",
        lambda r: {"query": f"python asyncio timeout example {r.randrange(100)}"},
    ),
    ToolProfile(
        "python", 0.05, 300, 1.4, 60, 150, 0.8, "execute",
        lambda r: {"code": f"print(sum(range({r.randrange(10**6)})))"},
    ),
    ToolProfile(
        "db_query", 0.03, 60, 1.1, 30, 45, 0.3, "execute",
        lambda r: {"sql": f"SELECT * FROM orders WHERE id = {r.randrange(10**5)}"},  # noqa: S608
    ),
)  # fmt: skip
_ERRORS = (
    ("InvalidArguments", "arguments do not match the tool's schema: 'path' is not a string"),
    ("FileNotFoundError", "no such file or directory: src/app/missing.py"),
    ("ToolError", "the command exited with status 1"),
)
_TRACEBACK = 'Traceback (most recent call last):\n  File "tool.py", line 42, in run\n' * 6


@dataclass(frozen=True)
class Generator:
    """Reproducible history rows whose calls ended uniformly over [end - span, end)."""

    count: int
    end: float
    seed: int = SEED
    span: float = SPAN_S

    def batches(self, size: int) -> Iterator[list[dict[str, Any]]]:
        """The rows, oldest first, `size` at a time."""
        rng = random.Random(self.seed)  # noqa: S311 - reproducible test data, not crypto
        agents = self.agents()
        agent_weights = _cumulative([1 / (k + 1) ** 0.8 for k in range(AGENTS)])
        tool_weights = _cumulative([tool.share for tool in TOOLS])
        step = self.span / self.count
        for first in range(0, self.count, size):
            yield [
                _row(
                    rng,
                    rng.choices(TOOLS, cum_weights=tool_weights)[0],
                    rng.choices(agents, cum_weights=agent_weights)[0],
                    self.end - self.span + (i + rng.random()) * step,
                )
                for i in range(first, min(first + size, self.count))
            ]

    def agents(self) -> list[str]:
        rng = random.Random(self.seed + 1)  # noqa: S311 - reproducible test data
        return [f"{rng.getrandbits(128):032x}" for _ in range(AGENTS)]


def _cumulative(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for weight in weights:
        total += weight
        out.append(total)
    return out


def _pick(rng: random.Random, choices: tuple[tuple[str, float], ...]) -> str:
    roll = rng.random()
    for value, share in choices:
        roll -= share
        if roll < 0:
            return value
    return choices[-1][0]


def _row(rng: random.Random, tool: ToolProfile, agent: str, finished_at: float) -> dict[str, Any]:
    """One call's history row, all columns set (executemany wants the same keys)."""
    status = _pick(rng, STATUSES)
    if status == "timeout":
        ms = tool.timeout_s * 1000 + rng.uniform(0, 80)
    else:
        ms = min(rng.lognormvariate(math.log(tool.median_ms), tool.sigma), tool.timeout_s * 1e3)
    wait_ms = rng.lognormvariate(math.log(4.0), 1.3)
    started_at = finished_at - ms / 1000
    error_type, error = rng.choice(_ERRORS) if status == "error" else (None, None)
    if status == "timeout":
        error_type, error = "ToolTimeout", f"timed out after {tool.timeout_s:g} s"
    return {
        "call_id": f"{rng.getrandbits(128):032x}",
        "agent_id": agent,
        "tool_name": tool.name,
        "tool_version": _pick(rng, VERSIONS),
        "arguments": tool.arguments(rng),
        "status": status,
        "queued_at": started_at - wait_ms / 1000,
        "started_at": started_at,
        "finished_at": finished_at,
        "execution_time_ms": round(ms, 3),
        "queue_wait_ms": round(wait_ms, 3),
        "worker": f"{tool.level}@worker-{rng.randrange(4)}",
        "deliveries": 1 if rng.random() < 0.995 else 2,
        "cpu_s": round(ms / 1000 * tool.cpu_share * rng.uniform(0.5, 1.0), 6),
        "peak_rss_bytes": int(rng.lognormvariate(math.log(tool.rss_mb * 2**20), 0.5)),
        "output_bytes": int(rng.lognormvariate(math.log(1500), 1.5)) if error is None else None,
        "error_type": error_type,
        "error": error,
        "traceback": _TRACEBACK if status == "error" and rng.random() < 0.2 else None,
        "approved_by": "alice" if tool.name == "bash" and rng.random() < 0.02 else None,
    }


# Timing helpers.


def timed_ms(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def p50(times: list[float]) -> float:
    return statistics.median(times)


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20, method="inclusive")[-1]


class RssSampler:
    """The process's resident set size, sampled every 10 ms on a thread: start and peak."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.start = self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        gc.collect()
        self.start = self.peak = self.process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self.process.memory_info().rss)


# The measurements, each on an engine holding the loaded rows.


def load(engine: Engine, generator: Generator) -> dict[str, Any]:
    """Insert the rows with SQLAlchemy core executemany, a transaction per batch."""
    table = CallRecord.__table__  # type: ignore[attr-defined]
    insert_s = 0.0
    started = time.perf_counter()
    for batch in generator.batches(LOAD_BATCH):
        began = time.perf_counter()
        with engine.begin() as connection:
            connection.execute(table.insert(), batch)
        insert_s += time.perf_counter() - began
    total_s = time.perf_counter() - started
    return {
        "rows": generator.count,
        "batch": LOAD_BATCH,
        "insert_s": round(insert_s, 2),
        "generate_s": round(total_s - insert_s, 2),
        "rows_per_s": round(generator.count / insert_s),
    }


def forget_rollups(engine: Engine) -> None:
    """Drop every hourly rollup, so the next statistics call rolls its hours up again."""
    with engine.begin() as connection:
        connection.execute(delete(CallRollup))
        connection.execute(delete(RolledHour))


def window_stats(engine: Engine) -> dict[str, dict[str, Any]]:
    """Per window ending now: the cold call (no rollups at all) and WARM_CALLS warm ones."""
    stats = HistoryStats(engine)
    found: dict[str, dict[str, Any]] = {}
    for label, span in WINDOWS.items():
        forget_rollups(engine)
        counted: list[int] = []

        def call(span: int = span, counted: list[int] = counted) -> None:
            now = time.time()
            counted.append(sum(tool.calls for tool in stats.tools(now - span, now)))

        cold = timed_ms(call)
        warm = [timed_ms(call) for _ in range(WARM_CALLS)]
        with engine.connect() as connection:
            rollups = connection.scalar(select(func.count()).select_from(CallRollup))
        found[label] = {
            "cold_ms": round(cold, 1),
            "warm_p50_ms": round(p50(warm), 1),
            "warm_p95_ms": round(p95(warm), 1),
            "calls": counted[-1],
            "rollup_rows": rollups,
        }
    return found


def page_queries(engine: Engine, agent: str, end: float) -> dict[str, dict[str, Any]]:
    """HistoryStore.query, 50 rows: page 1 and page 2 (by its cursor), p50 of QUERY_RUNS."""
    store = HistoryStore(engine)
    filters = {
        "tool=grep": HistoryFilter(tool="grep"),
        "tool=grep status=error": HistoryFilter(tool="grep", status="error"),
        "agent_id=one agent": HistoryFilter(agent_id=agent),
        "since/until 1 h": HistoryFilter(since=end - 3600, until=end),
    }
    found: dict[str, dict[str, Any]] = {}
    for label, where in filters.items():
        first = store.query(where, limit=50)
        cursor = first.next_cursor
        second = store.query(where, limit=50, cursor=cursor)
        page1 = [
            timed_ms(lambda where=where: store.query(where, limit=50)) for _ in range(QUERY_RUNS)
        ]
        page2 = [
            timed_ms(lambda where=where, at=cursor: store.query(where, limit=50, cursor=at))
            for _ in range(QUERY_RUNS)
        ]
        found[label] = {
            "page1_p50_ms": round(p50(page1), 2),
            "page2_p50_ms": round(p50(page2), 2),
            "rows": [len(first.rows), len(second.rows)],
        }
    return found


def export_run(
    store: HistoryStore, where: HistoryFilter, kind: ExportFormat, *, trace: bool
) -> dict[str, Any]:
    """Export the rows to /dev/null: rows/s, RSS growth, and (`trace`) the Python heap peak."""
    rows = 0

    def counted(found: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        nonlocal rows
        for row in found:
            rows += 1
            yield row

    with open(os.devnull, "w", encoding="utf-8") as sink, RssSampler() as rss:
        if trace:
            tracemalloc.start()
        started = time.perf_counter()
        for piece in export(counted(store.rows(where)), kind):
            sink.write(piece)
        seconds = time.perf_counter() - started
        heap_peak = tracemalloc.get_traced_memory()[1] if trace else None
        if trace:
            tracemalloc.stop()
    return {
        "rows": rows,
        "seconds": round(seconds, 2),
        "rows_per_s": round(rows / seconds),
        "rss_growth_mb": round((rss.peak - rss.start) / 2**20, 1),
        "heap_peak_mb": None if heap_peak is None else round(heap_peak / 2**20, 2),
    }


def exports(engine: Engine, end: float) -> dict[str, dict[str, Any]]:
    """CSV and JSON of a tenth of the rows and of all of them, untraced then traced."""
    store = HistoryStore(engine)
    tenth = HistoryFilter(since=end - SPAN_S / 10)
    found: dict[str, dict[str, Any]] = {}
    for kind in ("csv", "json"):
        for label, where in (("N/10", tenth), ("N", HistoryFilter())):
            plain = export_run(store, where, kind, trace=False)
            traced = export_run(store, where, kind, trace=True)
            found[f"{kind} {label}"] = {**plain, "heap_peak_mb": traced["heap_peak_mb"]}
    return found


def analysis(engine: Engine) -> dict[str, Any]:
    """slow_tools over the last 24 h (stats computed beforehand), and what GET /v1/stats
    does: tools() and slow_tools() together."""
    stats = HistoryStats(engine)

    def window() -> tuple[float, float]:
        now = time.time()
        return now - 24 * 3600, now

    since, until = window()
    per_tool = stats.tools(since, until)
    runs = [
        timed_ms(lambda: slow_tools(engine, per_tool, since, until, SLOW_CALL_MS))
        for _ in range(ANALYSIS_RUNS)
    ]
    found = slow_tools(engine, per_tool, since, until, SLOW_CALL_MS)

    def endpoint() -> None:
        since, until = window()
        slow_tools(engine, stats.tools(since, until), since, until, SLOW_CALL_MS)

    both = [timed_ms(endpoint) for _ in range(ANALYSIS_RUNS)]
    return {
        "threshold_ms": SLOW_CALL_MS,
        "slow_tools": [tool.tool for tool in found],
        "first_ms": round(runs[0], 1),
        "p50_ms": round(p50(runs), 1),
        "with_stats_p50_ms": round(p50(both), 1),
    }


def write_many(engine: Engine, generator: Generator) -> dict[str, dict[str, Any]]:
    """HistoryStore.write_many: the workers' path (LIVE_BATCH rows of calls that just ended)
    and a bulk load through the store (LOAD_BATCH rows spread over the 7 days, which drops
    the rollups of every hour they touch). Building the CallRecords is not timed."""
    store = HistoryStore(engine)
    now = time.time()
    cases = {
        f"{LIVE_BATCH} rows, ended just now": Generator(LIVE_BATCH * 20, now, SEED + 2, 60),
        f"{LOAD_BATCH} rows, over 7 days": Generator(LOAD_BATCH * 3, generator.end, SEED + 3),
    }
    found: dict[str, dict[str, Any]] = {}
    for label, rows in cases.items():
        size = LIVE_BATCH if rows.count < LOAD_BATCH else LOAD_BATCH
        HistoryStats(engine).tools(now - SPAN_S - 3600, now)  # every hour rolled up
        seconds = 0.0
        for batch in rows.batches(size):
            records = [CallRecord(**row) for row in batch]
            seconds += timed_ms(lambda records=records: store.write_many(records)) / 1000
        found[label] = {"rows": rows.count, "rows_per_s": round(rows.count / seconds)}
    return found


# The databases.


@dataclass
class Database:
    """An engine on an empty toolrun schema, and facts about the database."""

    name: str
    engine: Engine
    version: str
    size: Callable[[], int]  # bytes the history takes


@contextmanager
def sqlite_database() -> Iterator[Database]:
    with tempfile.TemporaryDirectory(prefix="toolrun-bench-") as temp:
        path = Path(temp) / "history.db"
        engine = open_database(f"sqlite:///{path}")

        def size() -> int:
            return sum(file.stat().st_size for file in Path(temp).glob("history.db*"))

        try:
            yield Database("sqlite", engine, sqlite3.sqlite_version, size)
        finally:
            engine.dispose()


@contextmanager
def postgresql_database() -> Iterator[Database | None]:
    """A fresh schema bench_<random> on POSTGRES_URL, dropped at the end; None when the
    server does not answer."""
    admin = sqlalchemy.create_engine(POSTGRES_URL, connect_args={"connect_timeout": 2})
    schema = f"bench_{secrets.token_hex(4)}"
    try:
        with admin.begin() as connection:
            version = connection.scalar(sqlalchemy.text("SHOW server_version"))
            connection.execute(sqlalchemy.text(f"CREATE SCHEMA {schema}"))
    except OperationalError as exc:
        admin.dispose()
        print(f"PostgreSQL at {POSTGRES_URL} is unreachable, skipped: {exc.orig}")
        yield None
        return
    engine = open_database(f"{POSTGRES_URL}?options=-csearch_path%3D{schema}")

    def size() -> int:
        query = sqlalchemy.text("SELECT pg_total_relation_size('call_history')")
        with engine.connect() as connection:
            return int(connection.scalar(query) or 0)

    try:
        yield Database("postgresql", engine, str(version), size)
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(sqlalchemy.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def vacuum_analyze(engine: Engine) -> float:
    """PostgreSQL's steady state after a bulk load (what autovacuum would get to): seconds."""
    started = time.perf_counter()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(sqlalchemy.text("VACUUM ANALYZE call_history"))
    return round(time.perf_counter() - started, 2)


def recommendation_inputs(engine: Engine) -> dict[str, Any]:
    """What GET /v1/recommendations and POST /v1/select read besides the selection: the
    blacklist (N-failures check per tool), the week's per-tool records, the whitelist."""
    preferences = Preferences(
        engine,
        failures=Settings.model_fields["blacklist_failures"].default,
        cooldown_s=Settings.model_fields["blacklist_cooldown_s"].default,
    )
    tools = [tool.name for tool in TOOLS]

    def inputs() -> None:
        preferences.blacklist(tools)
        preferences.records(tools)
        preferences.whitelisted("agent")

    runs = [timed_ms(inputs) for _ in range(QUERY_RUNS)]
    return {"tools": len(tools), "first_ms": round(runs[0], 1), "p50_ms": round(p50(runs), 1)}


def measure(database: Database, rows: int, console: Console) -> dict[str, Any]:
    """Every measurement on one database, in an order where none disturbs the next."""
    engine = database.engine
    generator = Generator(rows, time.time() - END_AGO_S)

    def step(text: str) -> None:
        console.print(f"[dim]{database.name}: {text} …[/dim]")

    step(f"loading {rows:,} rows")
    found: dict[str, Any] = {"version": database.version, "load": load(engine, generator)}
    if database.name == "postgresql":
        step("VACUUM ANALYZE")
        found["load"]["vacuum_analyze_s"] = vacuum_analyze(engine)
    found["load"]["size_mb"] = round(database.size() / 2**20, 1)
    step("statistics")
    found["stats"] = window_stats(engine)
    step("filtered queries")
    found["queries"] = page_queries(engine, generator.agents()[7], generator.end)
    step("slow-tool analysis")
    found["analysis"] = analysis(engine)
    step("recommendation inputs")
    found["recommendations"] = recommendation_inputs(engine)
    step("exports")
    found["export"] = exports(engine, generator.end)
    step("write_many")
    found["write_many"] = write_many(engine, generator)
    return found


# The report.


def machine_facts() -> dict[str, Any]:
    cpu_model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "sqlalchemy": sqlalchemy.__version__,
    }


def section(title: str, names: list[str], columns: list[str]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("case")
    for name in names:
        for column in columns:
            table.add_column(f"{name}\n{column}" if column else name, justify="right")
    return table


def report(console: Console, results: dict[str, dict[str, Any]], rows: int) -> None:
    """Print a table per part of the benchmark, a column (group) per database."""
    names = list(results)
    table = section(f"load of {rows:,} rows (core executemany)", names, [""])
    for key, label in (
        ("rows_per_s", "rows/s (insert only)"),
        ("insert_s", "insert s"),
        ("generate_s", "generating rows s"),
        ("vacuum_analyze_s", "VACUUM ANALYZE s"),
        ("size_mb", "table + indexes MB"),
    ):
        table.add_row(label, *(_cell(results[name]["load"].get(key)) for name in names))
    for label in results[names[0]]["write_many"]:
        table.add_row(
            f"write_many rows/s, {label}",
            *(_cell(results[name]["write_many"][label]["rows_per_s"]) for name in names),
        )
    console.print(table)

    table = section(
        f"HistoryStats.tools (ms; goal < {STATS_GOAL_MS:g})", names, ["cold", "p50", "p95"]
    )
    for label in WINDOWS:
        cells = []
        for name in names:
            found = results[name]["stats"][label]
            cells += [_cell(found[key]) for key in ("cold_ms", "warm_p50_ms", "warm_p95_ms")]
        table.add_row(label, *cells)
    console.print(table)

    table = section(f"HistoryStore.query, 50 rows (p50 of {QUERY_RUNS}, ms)", names, ["p1", "p2"])
    for label in results[names[0]]["queries"]:
        cells = []
        for name in names:
            found = results[name]["queries"][label]
            cells += [_cell(found["page1_p50_ms"]), _cell(found["page2_p50_ms"])]
        table.add_row(label, *cells)
    console.print(table)

    table = section("export to /dev/null", names, ["rows/s", "heap MB", "RSS+ MB"])
    for label in results[names[0]]["export"]:
        cells = []
        for name in names:
            found = results[name]["export"][label]
            cells += [_cell(found[key]) for key in ("rows_per_s", "heap_peak_mb", "rss_growth_mb")]
        table.add_row(f"{label} ({found['rows']:,} rows)", *cells)
    console.print(table)

    table = section(f"slow_tools, 24 h, threshold {SLOW_CALL_MS:g} ms (ms)", names, [""])
    for key, label in (
        ("first_ms", "first call"),
        ("p50_ms", f"p50 of {ANALYSIS_RUNS}"),
        ("with_stats_p50_ms", "tools() + slow_tools() p50 (GET /v1/stats)"),
    ):
        table.add_row(label, *(_cell(results[name]["analysis"][key]) for name in names))
    console.print(table)
    tools = results[names[0]]["recommendations"]["tools"]
    table = section(f"recommendation inputs, {tools} tools (ms)", names, [""])
    for key, label in (
        ("first_ms", "first (computes the week's stats)"),
        ("p50_ms", f"p50 of {QUERY_RUNS} (the week's stats reused)"),
    ):
        table.add_row(label, *(_cell(results[name]["recommendations"][key]) for name in names))
    console.print(table)
    for name in names:
        windows = ", ".join(
            f"{label}: {found['calls']:,} calls, {found['rollup_rows']:,} rollup rows"
            for label, found in results[name]["stats"].items()
        )
        console.print(f"  {name} stats windows: {windows}", highlight=False)
        slow = ", ".join(results[name]["analysis"]["slow_tools"])
        console.print(f"  {name} slow tools: {slow}", highlight=False)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="history rows to load")
    parser.add_argument(
        "--database", choices=("sqlite", "postgresql", "both"), default="both", help="which"
    )
    args = parser.parse_args()
    if args.rows < 1000:
        parser.error("--rows must be at least 1000")

    console = Console(width=max(Console().width, 120))
    machine = machine_facts()
    console.print(
        f"cpus {machine['cpu_count']} {machine['cpu_model']} | {machine['memory_gb']} GB"
        f" | load {machine['load_average']} | Python {machine['python']}"
        f" | SQLite {machine['sqlite']} | SQLAlchemy {machine['sqlalchemy']}"
    )
    opened = {"sqlite": sqlite_database, "postgresql": postgresql_database}
    chosen = list(opened) if args.database == "both" else [args.database]
    results: dict[str, dict[str, Any]] = {}
    for name in chosen:
        with opened[name]() as database:
            if database is not None:
                console.print(f"{name} {database.version}")
                results[name] = measure(database, args.rows, console)
    if not results:
        raise SystemExit("no database to measure")
    report(console, results, args.rows)

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "benchmark": "history_queries",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rows": args.rows,
        "machine": machine,
        "results": results,
    }
    RESULTS.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

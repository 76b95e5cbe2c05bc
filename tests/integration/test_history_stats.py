"""Statistics, slow-tool analysis, export and pruning over real SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from toolrun.database import open_database
from toolrun.history import CallRecord, HistoryFilter, HistoryStore
from toolrun.history.analysis import slow_tools
from toolrun.history.export import COLUMNS, export, read_cell
from toolrun.history.rollups import HOUR_S, RolledHour
from toolrun.history.stats import HistoryStats

T0 = 1_800_000_000 - 1_800_000_000 % HOUR_S  # the start of an hour
BIN_ERROR = 2 ** (1 / 32) - 1


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = open_database(database_url)
    yield engine
    engine.dispose()


def call(
    n: int,
    ended: float,
    *,
    tool: str = "grep",
    version: str = "1.0.0",
    status: str = "success",
    ms: float | None = 10.0,
    **fields: Any,
) -> CallRecord:
    return CallRecord(
        call_id=f"c{n:05d}",
        tool_name=tool,
        tool_version=version,
        status=status,
        queued_at=ended - 1,
        finished_at=ended,
        execution_time_ms=ms,
        **fields,
    )


# A hand-checked set: 10 grep calls and 4 read calls in three hours.
GREP_MS = [5.0, 10.0, 20.0, 40.0, 80.0, 100.0, 200.0, 400.0, 800.0, 1600.0]
HAND_CHECKED = [
    *(
        call(
            n,
            T0 + 600 + n * 1000,  # 10 minutes in, then every 1000 s: spans hours 0..2
            status="timeout" if n == 9 else "error" if n in (3, 4) else "success",
            ms=ms,
            cpu_s=0.1 * (n + 1),
            peak_rss_bytes=1_000_000 * (n + 1),
            queue_wait_ms=2.0,
        )
        for n, ms in enumerate(GREP_MS)
    ),
    *(call(100 + n, T0 + 900 + n * 1800, tool="read", version=f"1.{n % 2}.0") for n in range(4)),
]


def test_hand_checked_stats(engine: Engine) -> None:
    HistoryStore(engine).write_many(HAND_CHECKED)
    stats = HistoryStats(engine, clock=lambda: T0 + 10 * HOUR_S)

    grep, read = stats.tools(T0, T0 + 4 * HOUR_S)

    assert (grep.tool, grep.calls, grep.failures, grep.timeouts) == ("grep", 10, 3, 1)
    assert grep.statuses == {"error": 2, "success": 7, "timeout": 1}
    assert grep.failure_rate == 0.3
    assert grep.mean_ms == pytest.approx(sum(GREP_MS) / 10)
    assert grep.max_ms == 1600.0
    assert grep.p50_ms == pytest.approx(80.0, rel=BIN_ERROR)  # 5th of 10
    assert grep.p95_ms == pytest.approx(1600.0, rel=BIN_ERROR)  # 10th of 10
    assert grep.mean_cpu_s == pytest.approx(0.55)
    assert grep.peak_rss_bytes == 10_000_000
    assert grep.mean_queue_wait_ms == 2.0
    assert (read.tool, read.version, read.calls, read.failures) == ("read", None, 4, 0)


def test_per_version_and_windows(engine: Engine) -> None:
    HistoryStore(engine).write_many(HAND_CHECKED)
    stats = HistoryStats(engine, clock=lambda: T0 + 10 * HOUR_S)

    versions = stats.tools(T0, T0 + 4 * HOUR_S, by_version=True)
    first_hour = stats.tools(T0, T0 + HOUR_S)

    assert {(s.tool, s.version, s.calls) for s in versions} == {
        ("grep", "1.0.0", 10),
        ("read", "1.0.0", 2),
        ("read", "1.1.0", 2),
    }
    # grep ends at T0+600, +1600, +2600 in the first hour; read at T0+900 and T0+2700.
    assert {(s.tool, s.calls) for s in first_hour} == {("grep", 3), ("read", 2)}


def test_rolled_up_hours_give_what_the_rows_give(engine: Engine) -> None:
    HistoryStore(engine).write_many(HAND_CHECKED)
    window = (T0 + 300.0, T0 + 3 * HOUR_S + 100.0)  # partial hours at both edges

    from_rows = HistoryStats(engine, clock=lambda: T0).tools(*window)  # nothing is over yet
    rolled = HistoryStats(engine, clock=lambda: T0 + 10 * HOUR_S).tools(*window)
    with Session(engine) as session:
        marked = sorted(session.exec(select(RolledHour.hour)))

    assert marked == [T0 // HOUR_S + 1, T0 // HOUR_S + 2]  # the whole hours inside the window
    assert rolled == from_rows


def test_a_late_row_in_a_rolled_up_hour_is_counted(engine: Engine) -> None:
    store = HistoryStore(engine)
    store.write_many(HAND_CHECKED)
    stats = HistoryStats(engine)  # the real clock: T0 is long over
    before = stats.tools(T0, T0 + 4 * HOUR_S)

    store.write(call(999, T0 + 1200, status="error", ms=5.0))
    after = stats.tools(T0, T0 + 4 * HOUR_S)

    assert [s.calls for s in before] == [10, 4]
    assert (after[0].tool, after[0].calls, after[0].failures) == ("grep", 11, 4)


def test_slow_tools_say_what_their_slow_calls_share(engine: Engine) -> None:
    rows = [
        call(n, T0 + n, ms=900.0 + n, arguments={"pattern": "def", "path": "."}) for n in range(8)
    ]
    rows += [
        call(10 + n, T0 + 50 + n, ms=700.0, arguments={"pattern": "x", "path": "src"})
        for n in range(2)
    ]
    rows += [call(20 + n, T0 + 60 + n, tool="read", ms=3.0) for n in range(10)]
    rows += [
        call(40 + n, T0 + 80 + n, tool="bash", ms=2500.0, arguments={"command": "pytest -x"})
        for n in range(5)
    ]
    HistoryStore(engine).write_many(rows)
    window = (T0, T0 + HOUR_S)
    stats = HistoryStats(engine).tools(*window)

    slow = {s.tool: s for s in slow_tools(engine, stats, *window, threshold_ms=500.0)}

    assert set(slow) == {"grep", "bash"}
    grep = slow["grep"]
    assert grep.slow_calls == 10
    assert grep.suggestion == (
        "grep is slow (p95 907 ms over 10 calls): search a narrower path or a more specific "
        "pattern; 80% of slow calls searched the workspace root"
    )
    assert slow["bash"].findings == ["100% of slow calls ran `pytest`"]
    assert slow["bash"].suggestion.startswith("bash is slow (p95 2.5 s over 5 calls)")


NASTY = [
    {"pattern": 'say "hi", then\nleave', "path": "ünïcode/ø"},
    {"command": "=cmd|' /C calc'!A0"},
    {},
]


def test_csv_and_json_exports_parse_back_to_the_same_rows(engine: Engine) -> None:
    store = HistoryStore(engine)
    rows = [
        call(n, T0 + n, arguments=NASTY[n % 3], error="-1 is not allowed" if n % 2 else None)
        for n in range(25)
    ]
    rows[0].error = "@SUM(A1:A9)"
    rows[1].worker = "'quoted"
    rows[2].error = '=HYPERLINK("http://evil.example")'
    store.write_many(rows)
    stored = list(store.rows(HistoryFilter(), page_size=7))  # several pages

    as_json = json.loads("".join(export(store.rows(HistoryFilter(), page_size=7), "json")))
    text = "".join(export(store.rows(HistoryFilter(), page_size=7), "csv"))
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    header, *cells = list(reader)
    from_csv = [
        {name: read_cell(name, cell) for name, cell in zip(header, row, strict=True)}
        for row in cells
    ]

    assert text.startswith("\ufeffcall_id,")
    assert "\r\n" in text
    assert header == COLUMNS
    assert [r["call_id"] for r in stored] == [f"c{n:05d}" for n in range(24, -1, -1)]
    assert as_json == stored
    assert from_csv == [{**row, "agent_name": None} for row in stored]  # no name given
    for escaped in ("'=HYPERLINK", "'@SUM", "''quoted"):  # no live formulas
        assert escaped in text


def test_export_applies_the_filters(engine: Engine) -> None:
    store = HistoryStore(engine)
    store.write_many(HAND_CHECKED)

    errors = list(store.rows(HistoryFilter(tool="grep", status="error")))

    assert sorted(r["call_id"] for r in errors) == ["c00003", "c00004"]


def test_prune_deletes_old_rows_and_their_statistics(engine: Engine) -> None:
    store = HistoryStore(engine)
    store.write_many(HAND_CHECKED)
    stats = HistoryStats(engine)
    assert sum(s.calls for s in stats.tools(T0, T0 + 4 * HOUR_S)) == 14  # hours rolled up

    gone = store.prune(T0 + HOUR_S, batch=2)  # queued in the first hour: 4 grep + 2 read

    assert gone == 6
    left = stats.tools(T0, T0 + 4 * HOUR_S)
    assert {(s.tool, s.calls) for s in left} == {("grep", 6), ("read", 2)}
    assert store.get("c00003") is None  # ended in the second hour, queued in the first
    assert store.get("c00004") is not None


def test_an_unbounded_window_covers_the_data_it_has(engine: Engine) -> None:
    HistoryStore(engine).write_many(HAND_CHECKED)
    stats = HistoryStats(engine)

    everything = stats.tools(-1e308, 1e308)  # hours are rolled up from the first call on

    assert everything == stats.tools(T0, T0 + 4 * HOUR_S)
    assert HistoryStats(engine).tools(T0 + 5 * HOUR_S, T0) == []


def test_stats_roll_up_while_workers_write(engine: Engine) -> None:
    store = HistoryStore(engine)
    store.write_many(HAND_CHECKED)
    stop = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:  # late rows into rolled-up hours: each drops that hour's rollup
        n = 1000
        while not stop.is_set():
            try:
                store.write_many([call(n, T0 + 600 + n % 7 * 1500)])
            except BaseException as exc:  # pragma: no cover - reported below
                failures.append(exc)
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        counts = [
            sum(s.calls for s in HistoryStats(engine).tools(T0, T0 + 4 * HOUR_S)) for _ in range(30)
        ]
    finally:
        stop.set()
        writer.join()

    assert not failures
    assert counts == sorted(counts)  # never fewer calls than a query before
    final = sum(s.calls for s in HistoryStats(engine).tools(T0, T0 + 4 * HOUR_S))
    assert final == len(store.query(HistoryFilter(), limit=1000).rows)


def test_byte_counts_over_two_gib_are_kept(engine: Engine) -> None:
    store = HistoryStore(engine)
    big = call(1, T0, peak_rss_bytes=3 * 2**30, output_bytes=5 * 2**30)

    store.write_many([big, call(2, T0 + 1)])

    stored = store.get("c00001")
    assert stored is not None
    assert (stored.peak_rss_bytes, stored.output_bytes) == (3 * 2**30, 5 * 2**30)
    assert store.get("c00002") is not None
    [grep] = HistoryStats(engine).tools(T0, T0 + HOUR_S)
    assert grep.peak_rss_bytes == 3 * 2**30

"""Statistics per tool (or per tool version) over a time window of call ends.

Whole hours that are over come from the hourly rollups (rolled up on first use), the
partial hours at the window's edges from the history rows themselves, so the counts, sums,
means and maxima are exact; p50 and p95 come from log-scale histograms (within 2.2 %).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection, Engine

from toolrun.history import latency
from toolrun.history.records import CallRecord
from toolrun.history.rollups import (
    HOUR_S,
    SEAL_DELAY_S,
    CallRollup,
    RolledHour,
    Summary,
    hour_of,
    take_rollup_lock,
)

Key = tuple[str, str]  # tool, version ("" when unknown)
FAILED = ("error", "timeout")
REFUSED = ("blocked", "denied", "cancelled")  # ended without running
STREAM_ROWS = 5000


class ToolStats(BaseModel):
    """How one tool (or one version of it) did over the window."""

    tool: str
    version: str | None  # None: every version together
    calls: int
    statuses: dict[str, int]
    failures: int  # error + timeout
    failure_rate: float  # of the calls that ran: refused ones (REFUSED) are left out
    timeouts: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    mean_queue_wait_ms: float | None
    mean_cpu_s: float | None
    peak_rss_bytes: int | None


class HistoryStats:
    """Statistics over the history in `engine`."""

    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock

    def tools(self, since: float, until: float, *, by_version: bool = False) -> list[ToolStats]:
        """Every tool that had calls end in [since, until), most calls first."""
        groups: dict[tuple[str, str | None], Summary] = defaultdict(Summary)
        for (tool, version), summary in self.summaries(since, until).items():
            groups[(tool, (version or None) if by_version else None)].merge(summary)
        found = [_stats(tool, version, summary) for (tool, version), summary in groups.items()]
        return sorted(found, key=lambda s: (-s.calls, s.tool, s.version or ""))

    def summaries(self, since: float, until: float) -> dict[Key, Summary]:
        """Totals per (tool, version) of the calls that ended in [since, until)."""
        totals: dict[Key, Summary] = defaultdict(Summary)
        with self.engine.connect() as connection:
            table = CallRecord.__table__  # type: ignore[attr-defined]
            oldest = connection.scalar(select(func.min(table.c.finished_at)))
            if oldest is None or until <= max(since, oldest):
                return totals
            since = max(since, oldest)  # no hours to roll up before the first call
            sealed = hour_of(self.clock() - SEAL_DELAY_S)  # hours before this one are over
            first = min(math.ceil(since / HOUR_S), sealed)
            last = max(min(math.floor(until / HOUR_S), sealed), first)  # rolled: [first, last)
            if last > first:
                self._roll_up(first, last)
                for key, summary in _rollups(connection, first, last):
                    totals[key].merge(summary)
            edges = [(since, min(until, first * HOUR_S)), (max(since, last * HOUR_S), until)]
            for start, end in edges if last > first else [(since, until)]:
                if end > start:
                    ended = _summarize(_ended(connection, start, end))
                    for (_, tool, version), summary in ended.items():
                        totals[(tool, version)].merge(summary)
        return totals

    def _roll_up(self, first: int, last: int) -> None:
        """Roll up the hours in [first, last) that are not yet, under the roll-up lock."""
        hours = RolledHour.__table__  # type: ignore[attr-defined]
        with self.engine.begin() as connection:
            take_rollup_lock(connection, self.clock())
            query = select(hours.c.hour).where(hours.c.hour >= first, hours.c.hour < last)
            done = set(connection.scalars(query))
            missing = [hour for hour in range(first, last) if hour not in done]
            for start, end in _spans(missing):
                by_hour = _summarize(_ended(connection, start * HOUR_S, end * HOUR_S))
                rollups = [
                    summary.rollup(hour, tool, version)
                    for (hour, tool, version), summary in by_hour.items()
                ]
                now = self.clock()
                marks = [{"hour": hour, "rolled_at": now} for hour in range(start, end)]
                _insert_new(connection, CallRollup, rollups)
                _insert_new(connection, RolledHour, marks)


def _ended(connection: Connection, start: float, end: float) -> Iterable[Sequence[Any]]:
    """(hour, tool, version, status, ms, wait ms, cpu s, rss) of calls that ended in range."""
    table = CallRecord.__table__  # type: ignore[attr-defined]
    query = select(
        table.c.finished_at,
        table.c.tool_name,
        table.c.tool_version,
        table.c.status,
        table.c.execution_time_ms,
        table.c.queue_wait_ms,
        table.c.cpu_s,
        table.c.peak_rss_bytes,
    ).where(table.c.finished_at >= start, table.c.finished_at < end)
    streamed = query.execution_options(stream_results=True, yield_per=STREAM_ROWS)
    for at, *rest in connection.execute(streamed):
        yield (hour_of(at), *rest)


def _summarize(rows: Iterable[Sequence[Any]]) -> dict[tuple[int, str, str], Summary]:
    by_key: dict[tuple[int, str, str], Summary] = defaultdict(Summary)
    for hour, tool, version, status, ms, wait_ms, cpu_s, rss in rows:
        by_key[(hour, tool, version or "")].add(status, ms, wait_ms, cpu_s, rss)
    return by_key


def _rollups(connection: Connection, first: int, last: int) -> Iterable[tuple[Key, Summary]]:
    """The rolled-up summaries of the hours in [first, last) (plain rows: no model objects,
    which cost more than the query)."""
    table = CallRollup.__table__  # type: ignore[attr-defined]
    query = table.select().where(table.c.hour >= first, table.c.hour < last)
    for values in connection.execute(query).mappings():
        yield (values["tool_name"], values["tool_version"]), Summary.of(values)


def _spans(hours: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive hours as [start, end) pairs."""
    spans: list[tuple[int, int]] = []
    for hour in hours:
        if spans and spans[-1][1] == hour:
            spans[-1] = (spans[-1][0], hour + 1)
        else:
            spans.append((hour, hour + 1))
    return spans


def _insert_new(connection: Connection, table: type[Any], rows: list[dict[str, Any]]) -> None:
    """Insert rows, leaving alone any another process inserted first."""
    if not rows:
        return
    postgres = connection.dialect.name == "postgresql"
    insert = postgresql_insert if postgres else sqlite_insert
    connection.execute(insert(table.__table__).on_conflict_do_nothing(), rows)


def _stats(tool: str, version: str | None, total: Summary) -> ToolStats:
    failures = sum(total.statuses.get(status, 0) for status in FAILED)
    ran = total.calls - sum(total.statuses.get(status, 0) for status in REFUSED)
    low, high = total.min_ms or 0.0, total.max_ms or 0.0
    return ToolStats(
        tool=tool,
        version=version,
        calls=total.calls,
        statuses=dict(sorted(total.statuses.items())),
        failures=failures,
        failure_rate=round(failures / ran, 4) if ran else 0.0,
        timeouts=total.statuses.get("timeout", 0),
        mean_ms=_mean(total.sum_ms, total.timed),
        p50_ms=_round(latency.percentile(total.histogram, 0.5, low=low, high=high)),
        p95_ms=_round(latency.percentile(total.histogram, 0.95, low=low, high=high)),
        max_ms=total.max_ms,
        mean_queue_wait_ms=_mean(total.sum_wait_ms, total.waited),
        mean_cpu_s=_mean(total.sum_cpu_s, total.metered, digits=4),
        peak_rss_bytes=total.max_rss_bytes,
    )


def _mean(total: float, count: int, digits: int = 3) -> float | None:
    return round(total / count, digits) if count else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)

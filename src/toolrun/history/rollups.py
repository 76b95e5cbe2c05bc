"""Hourly summaries of the history, so statistics over a million calls read a few rows.

An hour is rolled up once it is over (plus `SEAL_DELAY_S` for rows still in flight): one
`CallRollup` row per tool and version (its calls counted by status), and a `RolledHour`
marker, also for hours without calls. A history row written later into a rolled-up hour
(a call that ends long after it was expected, a row moved by a redelivery, a pruned row)
drops that hour's summary, and the next statistics query rolls it up again. Roll-ups and
such writes take the `RollupLock` row first, so neither can slip between the other's read
and write.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import JSON, BigInteger, Column, delete
from sqlalchemy.engine import Connection
from sqlmodel import Field, SQLModel, col

from toolrun.history import latency

HOUR_S = 3600
_N = TypeVar("_N", int, float)
SEAL_DELAY_S = 300.0
SEAL_MARGIN_S = 60.0


class CallRollup(SQLModel, table=True):
    """The calls of one tool version that ended within one hour."""

    __tablename__ = "call_rollup"

    hour: int = Field(primary_key=True)  # Unix time // 3600 of finished_at
    tool_name: str = Field(primary_key=True)
    tool_version: str = Field(primary_key=True)  # "" when unknown
    calls: int
    statuses: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON))
    timed: int  # calls with an execution time
    sum_ms: float
    min_ms: float | None = None
    max_ms: float | None = None
    waited: int  # calls with a queue wait
    sum_wait_ms: float
    metered: int  # calls with CPU seconds
    sum_cpu_s: float
    max_rss_bytes: int | None = Field(default=None, sa_column=Column(BigInteger))
    histogram: list[list[int]] = Field(default_factory=list, sa_column=Column(JSON))  # [bin, n]


class RolledHour(SQLModel, table=True):
    """An hour whose CallRollup rows are complete."""

    __tablename__ = "rolled_hour"

    hour: int = Field(primary_key=True)
    rolled_at: float


class RollupLock(SQLModel, table=True):
    """One row that a roll-up and a write into a rolled-up hour both update first, so they
    never interleave: a roll-up never misses a row written while it ran."""

    __tablename__ = "rollup_lock"

    id: int = Field(primary_key=True)
    taken_at: float


def take_rollup_lock(connection: Connection, now: float) -> None:
    """Hold the roll-up lock until `connection`'s transaction ends."""
    table = RollupLock.__table__  # type: ignore[attr-defined]
    taken = connection.execute(table.update().where(table.c.id == 1).values(taken_at=now))
    if taken.rowcount == 0:  # the row is made by the migration; here only if someone removed it
        connection.execute(table.insert().values(id=1, taken_at=now))


def hour_of(at: float) -> int:
    return int(at // HOUR_S)


def forget_hours(connection: Connection, hours: Iterable[int]) -> None:
    """Drop the rollups of `hours` (their history changed): they are rolled up again."""
    chosen = sorted(set(hours))
    if chosen:
        connection.execute(delete(RolledHour).where(col(RolledHour.hour).in_(chosen)))
        connection.execute(delete(CallRollup).where(col(CallRollup.hour).in_(chosen)))


def sealed_hours(finished: Iterable[float | None], now: float) -> set[int]:
    """The hours of these end times that may already be rolled up (or will be before a
    transaction that starts now ends)."""
    sealed = hour_of(now - SEAL_DELAY_S + SEAL_MARGIN_S)
    return {hour for at in finished if at is not None and (hour := hour_of(at)) < sealed}


@dataclass
class Summary:
    """Running totals over calls; one per (tool, version) key, or merged wider."""

    calls: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    timed: int = 0
    sum_ms: float = 0.0
    min_ms: float | None = None
    max_ms: float | None = None
    waited: int = 0
    sum_wait_ms: float = 0.0
    metered: int = 0
    sum_cpu_s: float = 0.0
    max_rss_bytes: int | None = None
    histogram: dict[int, int] = field(default_factory=dict)

    def add(
        self,
        status: str,
        execution_ms: float | None,
        wait_ms: float | None,
        cpu_s: float | None,
        rss_bytes: int | None,
    ) -> None:
        """Count one call."""
        self.calls += 1
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if execution_ms is not None:
            self.timed += 1
            self.sum_ms += execution_ms
            self.min_ms = _least(self.min_ms, execution_ms)
            self.max_ms = _most(self.max_ms, execution_ms)
            latency.merge(self.histogram, {latency.bin_of(execution_ms): 1})
        if wait_ms is not None:
            self.waited += 1
            self.sum_wait_ms += wait_ms
        if cpu_s is not None:
            self.metered += 1
            self.sum_cpu_s += cpu_s
        self.max_rss_bytes = _most(self.max_rss_bytes, rss_bytes)

    def merge(self, other: Summary) -> None:
        """Add another summary's calls to this one."""
        self.calls += other.calls
        for status, count in other.statuses.items():
            self.statuses[status] = self.statuses.get(status, 0) + count
        self.timed += other.timed
        self.sum_ms += other.sum_ms
        self.min_ms = _least(self.min_ms, other.min_ms)
        self.max_ms = _most(self.max_ms, other.max_ms)
        self.waited += other.waited
        self.sum_wait_ms += other.sum_wait_ms
        self.metered += other.metered
        self.sum_cpu_s += other.sum_cpu_s
        self.max_rss_bytes = _most(self.max_rss_bytes, other.max_rss_bytes)
        latency.merge(self.histogram, other.histogram)

    def rollup(self, hour: int, tool: str, version: str) -> dict[str, Any]:
        """The `call_rollup` row of this summary (JSON holds no int keys: the histogram is
        stored as [bin, count] pairs)."""
        histogram = sorted(self.histogram.items())
        return {
            **self.__dict__,
            "hour": hour,
            "tool_name": tool,
            "tool_version": version,
            "histogram": histogram,
        }

    @classmethod
    def of(cls, rollup: Mapping[Any, Any]) -> Summary:
        """The summary stored in a `call_rollup` row (its column values)."""
        summary = cls(**{name: rollup[name] for name in _SCALARS})
        summary.histogram = dict(rollup["histogram"])
        return summary


_SCALARS = tuple(name for name in Summary.__dataclass_fields__ if name != "histogram")


def _least(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _most(a: _N | None, b: _N | None) -> _N | None:
    return b if a is None else a if b is None else max(a, b)

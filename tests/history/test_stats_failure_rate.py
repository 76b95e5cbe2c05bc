"""A tool's failure rate is its failures' share of the calls that ran: calls refused before
running (blocked, denied, cancelled) are left out, in the stats and in selection's
success rate alike (real SQLite)."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from toolrun.history import CallRecord, HistoryStore
from toolrun.history.rollups import HOUR_S
from toolrun.history.stats import HistoryStats
from toolrun.selection.preferences import Preferences

T0 = 1_800_000_000 - 1_800_000_000 % HOUR_S


def write(engine: Engine, tool: str, *statuses: str) -> None:
    HistoryStore(engine).write_many(
        [
            CallRecord(
                call_id=f"{tool}-{n}",
                tool_name=tool,
                tool_version="1.0.0",
                status=status,
                queued_at=T0 + n,
                finished_at=T0 + n + 1,
                execution_time_ms=5.0,
            )
            for n, status in enumerate(statuses)
        ]
    )


def test_refused_calls_are_not_in_the_failure_rate(engine: Engine) -> None:
    write(engine, "bash", "success", "success", "error", "timeout")
    write(engine, "bash-refused", *["blocked"] * 3, "denied", "cancelled")
    write(engine, "mixed", "success", "error", "timeout", "success", "blocked", "denied")
    stats = HistoryStats(engine, clock=lambda: T0 + HOUR_S / 2)

    found = {row.tool: row for row in stats.tools(T0, T0 + HOUR_S)}

    assert (found["bash"].calls, found["bash"].failures, found["bash"].failure_rate) == (4, 2, 0.5)
    mixed = found["mixed"]
    assert (mixed.calls, mixed.failures, mixed.failure_rate) == (6, 2, 0.5)  # not 2 of 6
    assert found["bash-refused"].failure_rate == 0.0  # none ran: nothing failed


def test_selection_counts_success_over_the_calls_that_ran(engine: Engine) -> None:
    write(engine, "read", "success", "error", "blocked", "blocked", "denied", "cancelled")
    preferences = Preferences(engine, failures=3, cooldown_s=600, clock=lambda: T0 + HOUR_S)

    assert preferences.records(["read"])["read"].success_rate == 0.5  # not 1 - 1/6

"""Feedback, the whitelist and the blacklist (set, or after N failures in a row, until a
cool-down passes or an operator lifts it), in a real database."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import Engine

from toolrun.history import CallRecord, HistoryStore
from toolrun.selection.preferences import WEEK_STATS_TTL_S, MarkKind, Preferences


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def preferences(engine: Engine, clock: Clock) -> Preferences:
    return Preferences(engine, failures=3, cooldown_s=600, clock=clock)


def ended(engine: Engine, tool: str, status: str, at: float, number: int) -> None:
    HistoryStore(engine).write(
        CallRecord(
            call_id=f"{tool}-{number}",
            tool_name=tool,
            status=status,
            queued_at=at - 1,
            finished_at=at,
            execution_time_ms=5.0,
        )
    )


def fail(engine: Engine, tool: str, times: int, clock: Clock, start: int = 0) -> None:
    for number in range(start, start + times):
        clock.now += 1
        ended(engine, tool, "error", clock.now, number)


def test_n_failures_in_a_row_blacklist_a_tool_until_the_cooldown_passes(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    fail(engine, "flaky", 2, clock)
    assert preferences.blacklist(["flaky"]) == []

    fail(engine, "flaky", 1, clock, start=2)
    [listed] = preferences.blacklist(["flaky"])

    assert listed.reason == "its last 3 calls failed"
    assert listed.until == clock.now + 600
    clock.now += 601
    assert preferences.blacklist(["flaky"]) == []


def test_a_success_among_the_last_n_calls_keeps_a_tool_in(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    fail(engine, "flaky", 2, clock)
    clock.now += 1
    ended(engine, "flaky", "success", clock.now, 9)
    fail(engine, "flaky", 2, clock, start=10)

    assert preferences.blacklist(["flaky"]) == []


def test_an_operator_lifts_a_blacklisting_and_only_new_failures_count(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    fail(engine, "flaky", 3, clock)
    clock.now += 1
    preferences.mark(MarkKind.LIFT, "flaky", by="ops")

    assert preferences.blacklist(["flaky"]) == []
    fail(engine, "flaky", 3, clock, start=3)
    assert [b.tool_name for b in preferences.blacklist(["flaky"])] == ["flaky"]


def test_an_operator_blacklists_for_a_while_or_until_lifted(
    preferences: Preferences, clock: Clock
) -> None:
    preferences.mark(MarkKind.BLACKLIST, "bash", by="ops", until=clock.now + 60, reason="noisy")
    preferences.mark(MarkKind.BLACKLIST, "write", by="ops")

    listed = {b.tool_name: b for b in preferences.blacklist()}
    assert listed["bash"].reason == "set by ops: noisy"
    assert listed["write"].until is None
    clock.now += 61
    clock.now += 1
    preferences.mark(MarkKind.LIFT, "write", by="ops")
    assert preferences.blacklist() == []


def test_whitelist_entries_for_everyone_and_for_one_agent(preferences: Preferences) -> None:
    everyone = preferences.mark(MarkKind.WHITELIST, "grep", by="ops")
    preferences.mark(MarkKind.WHITELIST, "search", by="ops", agent_id="a1")

    assert preferences.whitelisted("a1") == {"grep", "search"}
    assert preferences.whitelisted("a2") == {"grep"}
    assert preferences.unmark(everyone.id) is True
    assert preferences.unmark(everyone.id) is False
    assert preferences.whitelisted("a2") == set()


def test_records_hold_success_rate_time_and_ratings(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    for number in range(4):
        clock.now += 1
        ended(engine, "read", "success" if number else "error", clock.now, number)
    preferences.add_feedback("read-1", "read", "a1", 5, "spot on")
    preferences.add_feedback("read-2", "read", "a1", 2, None)
    preferences.add_feedback("read-2", "read", "a1", 3, "replaced")

    record = preferences.records(["read", "grep"])

    assert set(record) == {"read"}
    assert record["read"].success_rate == 0.75
    assert record["read"].rating == 4.0
    assert record["read"].p50_ms is not None


def test_the_weeks_rates_are_reused_for_a_while_and_ratings_are_not(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    ended(engine, "read", "success", clock.now, 0)
    before = preferences.records(["read"])["read"]
    fail(engine, "read", 1, clock, start=1)
    preferences.add_feedback("read-0", "read", "a1", 1, None)

    soon = preferences.records(["read"])["read"]
    clock.now += WEEK_STATS_TTL_S
    later = preferences.records(["read"])["read"]

    assert before.success_rate == soon.success_rate == 1.0  # the week's stats are kept
    assert soon.rating == 1.0  # feedback counts at once
    assert later.success_rate == 0.5


def test_after_the_cooldown_failures_are_counted_afresh(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    fail(engine, "flaky", 3, clock)
    assert preferences.blacklist(["flaky"])
    clock.now += 601

    fail(engine, "flaky", 2, clock, start=3)
    assert preferences.blacklist(["flaky"]) == []  # two new failures are not three

    fail(engine, "flaky", 1, clock, start=5)
    [listed] = preferences.blacklist(["flaky"])
    assert listed.until == clock.now + 600


def test_failures_while_blacklisted_extend_the_cooldown(
    engine: Engine, preferences: Preferences, clock: Clock
) -> None:
    fail(engine, "flaky", 3, clock)
    clock.now += 300
    fail(engine, "flaky", 1, clock, start=3)
    clock.now += 400

    [listed] = preferences.blacklist(["flaky"])
    assert listed.until == clock.now - 400 + 600

"""The approval inbox: one decision per call, expiry, reopening."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from toolrun.database import open_database
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord, ApprovalStatus


@pytest.fixture
def inbox(tmp_path: Path) -> ApprovalInbox:
    return ApprovalInbox(open_database(f"sqlite:///{tmp_path / 'inbox.db'}"))


def park(inbox: ApprovalInbox, call_id: str, expires_in: float = 60) -> None:
    now = time.time()
    inbox.park(
        ApprovalRecord(
            call_id=call_id,
            tool_name="bash",
            tool_version="1.0.0",
            arguments={"command": "rm -rf build"},
            policy="dangerous",
            risk="high",
            warning="rm -rf",
            created_at=now,
            expires_at=now + expires_in,
        )
    )


def test_a_call_is_decided_once(inbox: ApprovalInbox) -> None:
    park(inbox, "c1")

    approved = inbox.decide("c1", approved=True, by="alice", reason="fine")

    assert approved is not None
    assert (approved.status, approved.decided_by, approved.reason) == ("approved", "alice", "fine")
    assert inbox.decide("c1", approved=False, by="bob") is None
    assert inbox.decide("missing", approved=True, by="bob") is None


def test_racing_deciders_get_one_winner(inbox: ApprovalInbox) -> None:
    park(inbox, "race")
    wins: list[bool] = []

    def decide(who: str) -> None:
        wins.append(inbox.decide("race", approved=who == "a", by=who) is not None)

    threads = [threading.Thread(target=decide, args=(name,)) for name in "abcdefgh"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(wins) == [False] * 7 + [True]


def test_only_overdue_calls_expire(inbox: ApprovalInbox) -> None:
    park(inbox, "late", expires_in=-1)
    park(inbox, "fresh", expires_in=60)

    expired = inbox.expire()

    assert [r.call_id for r in expired] == ["late"]
    assert [r.call_id for r in inbox.list(ApprovalStatus.PENDING)] == ["fresh"]
    assert inbox.decide("late", approved=True, by="alice") is None  # too late to approve


def test_reopen_puts_an_approved_call_back(inbox: ApprovalInbox) -> None:
    park(inbox, "c2")
    inbox.decide("c2", approved=True, by="alice")

    inbox.reopen("c2", ApprovalStatus.APPROVED)

    record = inbox.get("c2")
    assert record is not None
    assert (record.status, record.decided_by) == ("pending", None)


def test_a_call_past_its_deadline_cannot_be_approved_only_denied(inbox: ApprovalInbox) -> None:
    park(inbox, "overdue", expires_in=-1)  # the sweep has not run yet

    assert inbox.decide("overdue", approved=True, by="alice") is None
    denied = inbox.decide("overdue", approved=False, by="alice")
    assert denied is not None
    assert denied.status == "denied"


def test_count_by_status(inbox: ApprovalInbox) -> None:
    assert inbox.count() == 0
    for call_id in ("p1", "p2", "p3"):
        park(inbox, call_id)
    inbox.decide("p1", approved=False, by="alice")

    assert inbox.count() == 2
    assert inbox.count(ApprovalStatus.PENDING) == 2
    assert inbox.count(ApprovalStatus.DENIED) == 1
    assert inbox.count(ApprovalStatus.EXPIRED) == 0

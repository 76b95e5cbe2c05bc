"""What /metrics reads besides Redis's counters: the oldest pending approval's age and the
restarts `toolrun up`'s supervisor records."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from tests.monitoring.test_metrics import exposed
from toolrun.database import open_database
from toolrun.monitoring import PlatformCollector, Snapshot
from toolrun.monitoring.reading import oldest_pending, process_restarts, read_platform
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord


@pytest.fixture
def inbox(tmp_path: Path) -> ApprovalInbox:
    return ApprovalInbox(open_database(f"sqlite:///{tmp_path / 'toolrun.db'}"))


def park(inbox: ApprovalInbox, call_id: str, created_at: float) -> None:
    inbox.park(
        ApprovalRecord(
            call_id=call_id,
            tool_name="bash",
            tool_version="1.0.0",
            arguments={},
            policy="dangerous",
            risk="high",
            warning="",
            created_at=created_at,
            expires_at=created_at + 86400,
        )
    )


def test_the_oldest_pending_approval_is_the_first_parked_still_undecided(
    inbox: ApprovalInbox,
) -> None:
    now = time.time()
    assert oldest_pending(inbox) is None
    park(inbox, "old", now - 1000)
    park(inbox, "older", now - 2000)
    park(inbox, "new", now - 10)
    assert oldest_pending(inbox) == now - 2000

    assert inbox.decide("older", approved=True, by="alice") is not None

    assert oldest_pending(inbox) == now - 1000


def test_restarts_are_read_from_the_supervisors_status() -> None:
    status = {
        "api": {"pid": 10, "state": "running", "restarts": 2, "optional": False},
        "flower": {"pid": None, "state": "stopped", "restarts": 0, "optional": True},
        "odd": "not a process",
    }
    assert process_restarts(status) == {"api": 2, "flower": 0}
    assert process_restarts(None) == {}


def test_the_collector_serves_the_oldest_age_and_each_process_restarts() -> None:
    samples = exposed(Snapshot())
    assert samples["toolrun_approvals_oldest_pending_seconds", ()] == 0
    assert not any(name == "toolrun_process_restarts" for name, _ in samples)

    collector = PlatformCollector(
        Snapshot(),
        approvals_pending=2,
        oldest_pending_s=1900.5,
        process_restarts={"worker-execute": 4, "api": 0},
    )
    families = {family.name: family for family in collector.collect()}

    (age,) = families["toolrun_approvals_oldest_pending_seconds"].samples
    assert age.value == 1900.5
    restarts = families["toolrun_process_restarts"]
    assert restarts.type == "gauge"
    assert {sample.labels["process"]: sample.value for sample in restarts.samples} == {
        "api": 0,
        "worker-execute": 4,
    }


def test_read_platform_reports_the_oldest_age_and_the_status_files_restarts(
    redis_url: str, inbox: ApprovalInbox, tmp_path: Path
) -> None:
    park(inbox, "waiting", time.time() - 600)
    status = tmp_path / "processes.json"
    status.write_text(json.dumps({"api": {"pid": 1, "state": "running", "restarts": 3}}))

    async def read(status_file: Path | None) -> PlatformCollector:
        client = aioredis.Redis.from_url(redis_url)
        try:
            return await read_platform(
                client,
                inbox=inbox,
                agents=AgentStore(inbox.engine),
                queue_bound=0,
                status_file=status_file,
            )
        finally:
            await client.aclose()

    found = asyncio.run(read(status))
    assert 600 <= found.oldest_pending_s < 660
    assert found.process_restarts == {"api": 3}

    elsewhere = asyncio.run(read(tmp_path / "no-such-file.json"))
    assert elsewhere.process_restarts == {}
    assert inbox.decide("waiting", approved=False, by="alice") is not None
    assert asyncio.run(read(None)).oldest_pending_s == 0

"""The security log: events stored and listed, a flood capped per minute."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.database import open_database
from toolrun.permissions.security_log import EventKind, SecurityLog


@pytest.fixture
def engine_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'security.db'}"


def test_events_are_stored_and_filtered(engine_url: str) -> None:
    security = SecurityLog(open_database(engine_url))
    security.record(EventKind.NETWORK, "host not in network allowlist", target="evil.example:443")
    security.record(EventKind.AUTH, "invalid or revoked token", target="GET /v1/tools")

    network = security.list(kind=EventKind.NETWORK)

    assert [(e.kind, e.target) for e in network] == [("network", "evil.example:443")]
    assert [e.kind for e in security.list()] == ["auth", "network"]  # newest first


def test_a_flood_is_logged_but_not_all_stored(
    engine_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    security = SecurityLog(open_database(engine_url), stored_per_minute=5)

    for _ in range(20):
        security.record(EventKind.AUTH, "invalid or revoked token")

    assert len(security.list(limit=100)) == 5
    assert sum('"kind": "auth"' in r.getMessage() for r in caplog.records) == 20
    assert any("the rest are only logged" in r.getMessage() for r in caplog.records)

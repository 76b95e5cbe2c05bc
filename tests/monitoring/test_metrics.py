"""Counters in a real Redis: written as workers and the API write them, read as /metrics does."""

from __future__ import annotations

import pytest
import redis
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.monitoring.conftest import snapshot
from toolrun.calls.store import add_increments
from toolrun.monitoring import PlatformCollector, Snapshot
from toolrun.monitoring.metrics import BUCKET_LABELS, bucket_of, call_increments
from toolrun.monitoring.snapshot import queue_keys
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolStatus

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def exposed(snap: Snapshot, approvals_pending: int = 0) -> Samples:
    """Every sample of the Prometheus text /metrics would serve, by name and labels."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PlatformCollector(snap, approvals_pending=approvals_pending))
    text = generate_latest(registry).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_ended_calls_are_counted_by_tool_and_status(
    redis_client: redis.Redis, redis_url: str
) -> None:
    add_increments(redis_client, call_increments("read", ToolStatus.SUCCESS, 0.01))
    add_increments(redis_client, call_increments("read", ToolStatus.SUCCESS, 0.02))
    add_increments(redis_client, call_increments("read", ToolStatus.ERROR, 0.03))
    add_increments(redis_client, call_increments("write", ToolStatus.BLOCKED, None))

    snap = snapshot(redis_url)

    assert snap.calls == {
        ("read", "success"): 2,
        ("read", "error"): 1,
        ("write", "blocked"): 1,
    }
    assert set(snap.durations) == {"read"}  # a blocked call never executed
    samples = exposed(snap)
    assert samples["toolrun_calls_total", (("status", "success"), ("tool", "read"))] == 2
    assert samples["toolrun_calls_total", (("status", "blocked"), ("tool", "write"))] == 1


def test_duration_buckets_are_cumulative(redis_client: redis.Redis, redis_url: str) -> None:
    for seconds in (0.003, 0.005, 0.2, 0.2, 7.0, 400.0):
        add_increments(redis_client, call_increments("grep", ToolStatus.SUCCESS, seconds))

    samples = exposed(snapshot(redis_url))

    def bucket(le: str) -> float:
        return samples["toolrun_call_duration_seconds_bucket", (("le", le), ("tool", "grep"))]

    assert [bucket(le) for le in ("0.005", "0.01", "0.1", "0.25", "5.0", "10.0", "300.0")] == [
        2,
        2,
        2,
        4,
        4,
        5,
        5,
    ]
    assert bucket("+Inf") == 6
    counts = [bucket(le) for le in BUCKET_LABELS]
    assert counts == sorted(counts)
    assert samples["toolrun_call_duration_seconds_count", (("tool", "grep"),)] == 6
    total = samples["toolrun_call_duration_seconds_sum", (("tool", "grep"),)]
    assert total == pytest.approx(407.408)


@pytest.mark.parametrize(
    ("seconds", "label"),
    [(0.0, "0.005"), (0.005, "0.005"), (0.0051, "0.01"), (1, "1.0"), (300, "300.0"), (301, "+Inf")],
)
def test_a_bucket_holds_times_up_to_and_including_its_bound(seconds: float, label: str) -> None:
    assert bucket_of(seconds) == label


def test_queue_depth_counts_every_priority_list(redis_client: redis.Redis, redis_url: str) -> None:
    plain, *prioritised = queue_keys(PermissionLevel.EXECUTE.queue_name)
    assert plain == "tools.execute"
    assert prioritised == [
        "tools.execute\x06\x163",
        "tools.execute\x06\x166",
        "tools.execute\x06\x169",
    ]
    redis_client.rpush(plain, "a", "b")
    redis_client.rpush(prioritised[1], "c")
    redis_client.rpush("tools.read_only", "d")
    redis_client.rpush("tools.delegation", "e")

    samples = exposed(snapshot(redis_url), approvals_pending=3)

    depths = {
        dict(labels)["level"]: value
        for (name, labels), value in samples.items()
        if name == "toolrun_queue_depth"
    }
    assert depths == {"read_only": 1, "read_write": 0, "execute": 3, "admin": 0, "delegation": 1}
    assert samples["toolrun_approvals_pending", ()] == 3

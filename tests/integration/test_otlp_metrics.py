"""Metrics by OTLP (a real API and worker, a real OTLP/HTTP receiver): with an OTLP endpoint
set, the API sends what /metrics serves — the same families, names and labels — every
export interval, as service toolrun-api."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.otlp import ReceivedPoint, Receiver, otlp_receiver
from tests.integration.platform import Platform, apart
from toolrun.monitoring.metrics import BUCKETS
from toolrun.permissions.levels import PermissionLevel

OWN_DATABASE = 5  # other_database offset (test_scheduler_failover uses it too, never at once)
METRICS_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as started:
        yield started


@pytest.fixture(scope="module")
def exported(
    redis_url: str, receiver: Receiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """A platform (a read_only worker) whose API sends its metrics to `receiver` every
    0.5 s; no traces, which are decided apart."""
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
        "OTEL_TRACES_EXPORTER": "none",
    }
    root = tmp_path_factory.mktemp("metrics")
    with apart(
        redis_url, OWN_DATABASE, root, levels=(PermissionLevel.READ_ONLY,), extra_env=env
    ) as up:
        (up.workspace / "notes.txt").write_text("the notes\n")
        yield up


def read_notes(platform: Platform) -> None:
    response = httpx.post(
        f"{platform.base_url}/v1/calls",
        params={"wait": 30},
        json={"tool_name": "read", "arguments": {"file_path": "notes.txt"}},
        headers=platform.headers,
        timeout=60,
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "success", response.text


def last(points: list[ReceivedPoint], name: str, **attributes: str) -> ReceivedPoint | None:
    """The latest point of `name` whose attributes include `attributes`."""
    return next(
        (
            p
            for p in reversed(points)
            if p.name == name and attributes.items() <= p.attributes.items()
        ),
        None,
    )


def test_a_call_is_counted_in_the_metrics_sent_by_otlp(
    exported: Platform, receiver: Receiver
) -> None:
    read_notes(exported)

    def counted(points: list[ReceivedPoint]) -> bool:
        calls = last(points, "toolrun_calls", tool="read")
        duration = last(points, "toolrun_call_duration_seconds", tool="read")
        return calls is not None and calls.value == 1 and duration is not None

    points = receiver.wait_for_points(counted, METRICS_TIMEOUT_S, "read counted once")

    calls = last(points, "toolrun_calls", tool="read")
    assert calls is not None
    assert calls.service == "toolrun-api"
    assert calls.attributes == {"tool": "read", "status": "success"}
    assert (calls.kind, calls.monotonic, calls.cumulative) == ("sum", True, True)
    duration = last(points, "toolrun_call_duration_seconds", tool="read")
    assert duration is not None
    assert (duration.kind, duration.value, duration.cumulative) == ("histogram", 1, True)
    assert duration.explicit_bounds == tuple(float(bound) for bound in BUCKETS)
    assert sum(duration.bucket_counts) == 1
    assert duration.sum > 0
    workers = last(points, "toolrun_workers", level="read_only")
    assert workers is not None
    assert (workers.kind, workers.value) == ("gauge", 1)


def test_every_family_of_the_prometheus_page_is_sent(
    exported: Platform, receiver: Receiver
) -> None:
    read_notes(exported)
    page = httpx.get(f"{exported.base_url}/metrics", headers=exported.headers, timeout=10)
    assert page.status_code == 200, page.text
    served = {family.name for family in text_string_to_metric_families(page.text) if family.samples}
    assert {"toolrun_calls", "toolrun_queue_depth", "toolrun_queue_wait_seconds"} <= served

    receiver.wait_for_points(
        lambda points: served <= {p.name for p in points},
        METRICS_TIMEOUT_S,
        f"the families {sorted(served)}",
    )

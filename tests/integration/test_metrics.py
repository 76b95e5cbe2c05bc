"""GET /metrics on the real platform: counters shared by the API and worker processes.

The platform is shared with other tests, so counts are compared before and after.
"""

from __future__ import annotations

import uuid

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.platform import Platform, wait_for
from tests.integration.test_api_calls import submit
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(api: httpx.Client) -> Samples:
    response = api.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def calls(samples: Samples, tool: str, status: str) -> float:
    return samples.get(("toolrun_calls_total", (("status", status), ("tool", tool))), 0.0)


def executions(samples: Samples, tool: str) -> float:
    return samples.get(("toolrun_call_duration_seconds_count", (("tool", tool),)), 0.0)


def test_calls_are_counted_by_whoever_ended_them(api: httpx.Client, platform: Platform) -> None:
    reader = platform.agent(f"metrics-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY)
    before = scrape(api)

    assert submit(api, "read", file_path="hello.txt").json()["status"] == "success"
    assert submit(api, "read", file_path="hello.txt").json()["status"] == "success"
    assert submit(api, "read", file_path="missing.txt").json()["status"] == "error"
    with httpx.Client(
        base_url=platform.base_url, headers={"Authorization": f"Bearer {reader}"}, timeout=60
    ) as as_reader:
        blocked = submit(as_reader, "write", file_path="x.txt", content="x").json()
    assert blocked["status"] == "blocked"  # by the API: the agent's ceiling is read_only

    expected = {
        ("read", "success"): 2,
        ("read", "error"): 1,
        ("write", "blocked"): 1,
    }

    def deltas() -> dict[tuple[str, str], float]:
        after = scrape(api)
        return {key: calls(after, *key) - calls(before, *key) for key in expected}

    # Workers count a call just after storing its result: the caller may be quicker.
    wait_for(lambda: deltas() == expected, 10, "the workers' counts")
    after = scrape(api)
    assert deltas() == expected
    assert executions(after, "read") - executions(before, "read") == 3
    assert executions(after, "write") == executions(before, "write")  # never ran
    inf = ("toolrun_call_duration_seconds_bucket", (("le", "+Inf"), ("tool", "read")))
    assert after[inf] == executions(after, "read")


def test_a_denied_call_is_counted_by_the_api_and_leaves_the_inbox(api: httpx.Client) -> None:
    before = scrape(api)
    parked = submit(api, "bash", command="rm -rf metrics-nothing-here").json()
    assert parked["status"] == "awaiting_approval"
    waiting = scrape(api)

    denied = api.post(f"/v1/calls/{parked['call_id']}/deny", json={"reason": "no"})

    assert denied.json()["status"] == "denied"
    after = scrape(api)
    assert calls(after, "bash", "denied") - calls(before, "bash", "denied") == 1
    pending = ("toolrun_approvals_pending", ())
    assert waiting[pending] >= 1
    assert waiting[pending] - after[pending] == 1


def test_queue_depths_and_pending_approvals_are_reported(api: httpx.Client) -> None:
    samples = scrape(api)

    depths = {
        dict(labels)["level"]: value
        for (name, labels), value in samples.items()
        if name == "toolrun_queue_depth"
    }
    assert set(depths) == {*(level.value for level in PermissionLevel), "delegation"}
    assert all(depth >= 0 for depth in depths.values())
    assert samples["toolrun_approvals_pending", ()] >= 0


def test_metrics_need_an_operator_token(platform: Platform) -> None:
    agent = platform.agent(f"nosy-{uuid.uuid4().hex[:8]}", PermissionLevel.ADMIN)
    operator = platform.agent(
        f"ops-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY, role=Role.OPERATOR
    )
    url = f"{platform.base_url}/metrics"

    assert httpx.get(url, timeout=10).status_code == 401
    forbidden = httpx.get(url, headers={"Authorization": f"Bearer {agent}"}, timeout=10)
    assert forbidden.status_code == 403
    allowed = httpx.get(url, headers={"Authorization": f"Bearer {operator}"}, timeout=10)
    assert allowed.status_code == 200
    assert "# TYPE toolrun_calls_total counter" in allowed.text

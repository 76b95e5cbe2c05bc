"""Many agents on one platform (real Redis, real API and worker processes): one agent's
flood does not hold up another agent's call, batch work waits behind interactive calls,
a full queue answers 503 and a quota 429 (both with Retry-After), the SDK waits and sends
again, and each agent's use is shown (API, CLI, Prometheus, security log)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.platform import Platform, apart, wait_for
from toolrun.client import ApiError, Client
from toolrun.permissions.levels import PermissionLevel

BOUND = 30  # calls that may wait on a queue here
SLOTS = 2  # the read_only worker's pool


@pytest.fixture(scope="module")
def shared(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """A platform of its own: one read_only worker of SLOTS, nothing handed out ahead."""
    env = {"TOOLRUN_QUEUE_BOUND": str(BOUND), "TOOLRUN_DISPATCH_AHEAD": "0"}
    root = tmp_path_factory.mktemp("fair")
    with apart(redis_url, 6, root, levels=(PermissionLevel.READ_ONLY,), extra_env=env) as up:
        (up.workspace / "hello.txt").write_text("hello\n")
        yield up


def api(platform: Platform, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=platform.base_url, headers=headers, timeout=60)


def submit(client: httpx.Client, tool: str, **body: Any) -> httpx.Response:
    return client.post("/v1/calls", json={"tool_name": tool, **body})


def started_at(client: httpx.Client, call_id: str) -> float:
    """When the call started, once it has ended."""
    result = client.get(f"/v1/calls/{call_id}", params={"wait": 60}).json()
    assert result["status"] == "success", result
    return float(result["metadata"]["started_at"])


def _refusal(client: Client, arguments: dict[str, Any]) -> ApiError | None:
    """The SDK's error for a call refused at once (no retries), or None when accepted."""
    try:
        client.call("read", arguments, wait=0)
    except ApiError as exc:
        return exc
    return None


def test_a_flood_does_not_hold_up_another_agents_call(shared: Platform) -> None:
    flood = api(shared, shared.agent("flood", PermissionLevel.READ_ONLY))
    quiet = api(shared, shared.agent("quiet", PermissionLevel.READ_ONLY))
    with flood, quiet:
        flooded = []
        for _ in range(24):
            response = submit(flood, "sleepy", arguments={"seconds": 0.3})
            assert response.status_code == 202, response.text
            flooded.append(response.json()["call_id"])
        backlog = flood.get("/v1/agents/me").json()["usage"]
        metrics = httpx.get(f"{shared.base_url}/metrics", headers=shared.headers).text

        answer = submit(quiet, "read", arguments={"file_path": "hello.txt"}, id="quiet-1")
        waited = quiet.get("/v1/calls/quiet-1", params={"wait": 60}).json()

        assert answer.status_code in (200, 202), answer.text
        assert waited["status"] == "success", waited
        assert backlog["queued"] > 0
        assert backlog["in_flight"] >= backlog["queued"]
        queued = re.search(r'toolrun_agent_calls_queued\{agent="flood"\} (\d+)', metrics)
        assert queued is not None
        assert int(queued[1]) > 0
        in_flight = re.search(r'toolrun_agent_calls_in_flight\{agent="flood"\} (\d+)', metrics)
        assert in_flight is not None  # its calls waiting and running are open
        assert int(in_flight[1]) > 0
        # Its call went ahead of the flood's calls still waiting: at most one slot's
        # worth of them started before it (the one freeing as it arrived).
        started = float(waited["metadata"]["started_at"])
        after = [call for call in flooded if started_at(flood, call) > started]
        assert len(after) >= len(flooded) - SLOTS - 2, (len(after), len(flooded))
        assert flood.get("/v1/agents/me").json()["usage"] == {
            "queued": 0,
            "in_flight": 0,
            "throttled": {},
        }


def test_batch_work_waits_behind_interactive_calls(shared: Platform) -> None:
    with api(shared, shared.agent("pipeline", PermissionLevel.READ_ONLY)) as client:
        batch = [
            submit(client, "sleepy", arguments={"seconds": 0.2}, priority="batch").json()
            for _ in range(12)
        ]
        chat = [submit(client, "sleepy", arguments={"seconds": 0.2}).json() for _ in range(3)]

        batch_starts = sorted(started_at(client, call["call_id"]) for call in batch)
        last_chat = max(started_at(client, call["call_id"]) for call in chat)

    # Interactive calls queued last started before all but the batch calls already
    # running, and the batch calls queued first, that had their turn meanwhile.
    assert sum(start > last_chat for start in batch_starts) >= 12 - SLOTS - 2


def test_a_full_queue_answers_503_with_retry_after(shared: Platform) -> None:
    with api(shared, shared.agent("greedy", PermissionLevel.READ_ONLY)) as client:
        answers = [submit(client, "sleepy", arguments={"seconds": 1}) for _ in range(BOUND + 8)]

        codes = [answer.status_code for answer in answers]
        full = [answer for answer in answers if answer.status_code == 503]
        assert codes.count(202) >= BOUND, codes
        assert full, codes
        assert int(full[0].headers["retry-after"]) >= 1
        assert "queue tools.read_only is full" in full[0].json()["detail"]
        metrics = httpx.get(f"{shared.base_url}/metrics", headers=shared.headers).text
        assert 'toolrun_calls_throttled_total{agent="greedy",quota="queue_bound"}' in metrics
        assert f"toolrun_queue_bound {float(BOUND)}" in metrics
        for answer in answers:  # the queue drains (2 slots, 1 s a call)
            if answer.status_code == 202:
                client.get(f"/v1/calls/{answer.json()['call_id']}", params={"wait": 60})


def test_a_quota_answers_429_and_the_sdk_waits_then_sends_again(shared: Platform) -> None:
    token = shared.agent("chatty", PermissionLevel.READ_ONLY)
    created = shared.cli("agents", "quota", "chatty", "--rate", "1", "--burst", "2")
    assert created.returncode == 0, created.stderr
    arguments = {"file_path": "hello.txt"}
    with api(shared, token) as client:
        answers = [submit(client, "read", arguments=arguments) for _ in range(3)]

        assert [answer.status_code for answer in answers[:2]] == [202, 202]
        refused = answers[2]
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "1"
        assert (
            "agent chatty is over its quota rate_per_s: 1 calls per second"
            in (refused.json()["detail"])
        )
        # Nothing was recorded: the same id is free for the retry.
        with Client(shared.base_url, token=token) as sdk:
            result = sdk.call("read", arguments, wait=30)
        assert result.ok, result.error
        with Client(shared.base_url, token=token, retries=0) as impatient:
            answers_now = [_refusal(impatient, arguments) for _ in range(3)]
        refusals = [refusal for refusal in answers_now if refusal is not None]
        assert refusals, "a burst of 2 takes 2 of 3 calls at most"  # the SDK took a token too
        assert refusals[0].status_code == 429
        assert refusals[0].retry_after_s == 1.0

    shown = shared.cli("agents", "show", "chatty")
    assert shown.returncode == 0, shown.stderr
    assert "rate_per_s     1\n" in shown.stdout
    assert "refused    rate_per_s " in shown.stdout

    def quota_event() -> bool:
        events = httpx.get(
            f"{shared.base_url}/v1/security-events",
            params={"kind": "quota"},
            headers=shared.headers,
        ).json()
        return any("chatty" in event["reason"] for event in events)

    wait_for(quota_event, 10, "the quota refusal in the security log")
    metrics = httpx.get(f"{shared.base_url}/metrics", headers=shared.headers).text
    assert 'toolrun_calls_throttled_total{agent="chatty",quota="rate_per_s"}' in metrics
    assert 'toolrun_agent_calls_in_flight{agent="chatty"}' not in metrics  # none open


def test_quotas_are_set_through_the_api_and_shown_to_the_agent(shared: Platform) -> None:
    admin = httpx.Client(base_url=shared.base_url, headers=shared.headers, timeout=30)
    with admin:
        created = admin.post(
            "/v1/agents",
            json={"name": "capped", "ceiling": "read_only", "quota": {"max_in_flight": 2}},
        )
        assert created.status_code == 201, created.text
        token = created.json()["token"]
        bad = admin.patch("/v1/agents/capped/quota", json={"max_queued": -1})
        unknown = admin.patch("/v1/agents/nobody/quota", json={"max_queued": 1})
        assert bad.status_code == 422
        assert unknown.status_code == 404

    with api(shared, token) as client:
        mine = client.get("/v1/agents/me").json()
        assert mine["quota"]["max_in_flight"] == 2
        assert mine["quota"]["own"] == ["max_in_flight"]
        answers = [
            submit(client, "sleepy", arguments={"seconds": 0.5}, id=f"capped-{number}")
            for number in range(3)
        ]
        assert [answer.status_code for answer in answers] == [202, 202, 429]
        assert "max_in_flight: 2 calls queued or running" in answers[2].json()["detail"]
        # A retry of an open call (its answer lost) gets that call's state, not a 429.
        again = submit(client, "sleepy", arguments={"seconds": 0.5}, id="capped-0")
        assert again.status_code == 202, again.text
        assert again.json()["call_id"] == "capped-0"
        for answer in answers[:2]:
            client.get(f"/v1/calls/{answer.json()['call_id']}", params={"wait": 30})
        time.sleep(0.1)  # the ending is stored before the answer: open again
        assert submit(client, "read", arguments={"file_path": "hello.txt"}).status_code in (
            200,
            202,
        )

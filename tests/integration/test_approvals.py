"""The approval inbox on the running platform: park, approve, deny, expire, standing rules."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.integration.platform import Platform, running, wait_for
from toolrun.calls import keys
from toolrun.calls.store import CallStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus


def submit(
    api: httpx.Client, command: str, json_id: str | None = None, **options: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"tool_name": "bash", "arguments": {"command": command}}
    if json_id is not None:
        body["id"] = json_id
    response = api.post("/v1/calls", json=body, **options)
    assert response.status_code in {200, 202}, response.text
    return dict(response.json())


def pending_ids(api: httpx.Client) -> set[str]:
    return {
        item["call_id"] for item in api.get("/v1/approvals", params={"status": "pending"}).json()
    }


@pytest.fixture
def victims(platform_workspace: Path, request: pytest.FixtureRequest) -> list[Path]:
    """Two directories a dangerous command would delete."""
    made = [platform_workspace / f"{request.node.name[:40]}-{n}" for n in range(2)]
    for path in made:
        path.mkdir()
        (path / "file").write_text("x")
    return made


def test_a_dangerous_call_waits_until_approved(api: httpx.Client, victims: list[Path]) -> None:
    target = victims[0]
    parked = submit(api, f"rm -rf {target.name}", params={"wait": 5})

    assert parked["status"] == "awaiting_approval"
    assert parked["metadata"]["policy"] == "dangerous"
    assert parked["metadata"]["risk"] == "high"
    assert "rm -rf deletes trees without asking" in parked["error"]
    assert target.exists()
    item = next(i for i in api.get("/v1/approvals").json() if i["call_id"] == parked["call_id"])
    assert item["arguments"] == {"command": f"rm -rf {target.name}"}
    assert (item["status"], item["agent_name"], item["policy"]) == ("pending", "admin", "dangerous")

    approved = api.post(f"/v1/calls/{parked['call_id']}/approve", json={"reason": "cleanup"})
    assert approved.status_code == 202
    final = api.get(f"/v1/calls/{parked['call_id']}", params={"wait": 30}).json()

    assert final["status"] == "success", final
    assert not target.exists()
    record = next(i for i in api.get("/v1/approvals").json() if i["call_id"] == parked["call_id"])
    assert (record["status"], record["decided_by"], record["reason"]) == (
        "approved",
        "admin",
        "cleanup",
    )


def test_a_denied_call_never_runs(api: httpx.Client, victims: list[Path]) -> None:
    parked = submit(api, f"rm -rf {victims[0].name}")

    denied = api.post(f"/v1/calls/{parked['call_id']}/deny", json={"reason": "not today"})
    again = api.post(f"/v1/calls/{parked['call_id']}/approve")

    assert denied.status_code == 200
    assert denied.json()["status"] == "denied"
    assert denied.json()["error"].endswith("— denied by admin: not today")
    assert again.status_code == 409
    assert (
        again.json()["detail"]
        == f"call {parked['call_id']!r} is not awaiting approval (it is denied)"
    )
    assert api.get(f"/v1/calls/{parked['call_id']}").json()["status"] == "denied"
    assert victims[0].exists()


def test_approving_one_of_two_runs_only_that_one(api: httpx.Client, victims: list[Path]) -> None:
    first = submit(api, f"rm -rf {victims[0].name}")
    second = submit(api, f"rm -rf {victims[1].name}")
    assert {first["call_id"], second["call_id"]} <= pending_ids(api)

    api.post(f"/v1/calls/{second['call_id']}/approve")
    done = api.get(f"/v1/calls/{second['call_id']}", params={"wait": 30}).json()

    assert done["status"] == "success"
    assert not victims[1].exists()
    assert victims[0].exists()
    assert api.get(f"/v1/calls/{first['call_id']}").json()["status"] == "awaiting_approval"
    assert first["call_id"] in pending_ids(api)
    api.post(f"/v1/calls/{first['call_id']}/deny")


def test_an_agent_token_cannot_approve(
    platform: Platform, api: httpx.Client, victims: list[Path]
) -> None:
    token = platform.agent("sneaky", PermissionLevel.ADMIN)
    with httpx.Client(
        base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"}
    ) as agent:
        parked = submit(agent, f"rm -rf {victims[0].name}")
        refused = agent.post(f"/v1/calls/{parked['call_id']}/approve")

    assert refused.status_code == 403
    assert (
        refused.json()["detail"]
        == "agent sneaky (agent) may not do this; it needs the operator role"
    )
    assert parked["call_id"] in pending_ids(api)
    assert victims[0].exists()
    events = api.get("/v1/security-events", params={"kind": "forbidden"}).json()
    assert any(e["target"] == f"POST /v1/calls/{parked['call_id']}/approve" for e in events)
    api.post(f"/v1/calls/{parked['call_id']}/deny")


def test_an_operator_approves_an_agents_call(platform: Platform, victims: list[Path]) -> None:
    agent_token = platform.agent("builder", PermissionLevel.EXECUTE)
    ops_token = platform.agent("oncall", PermissionLevel.READ_ONLY, Role.OPERATOR)
    base = platform.base_url
    with (
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {agent_token}"}, timeout=60
        ) as agent,
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {ops_token}"}, timeout=60
        ) as ops,
    ):
        parked = submit(agent, f"rm -rf {victims[0].name}")
        ops.post(f"/v1/calls/{parked['call_id']}/approve")
        final = agent.get(f"/v1/calls/{parked['call_id']}", params={"wait": 30}).json()

    assert final["status"] == "success"
    assert final["metadata"]["agent_id"] == parked["metadata"]["agent_id"]


def test_a_standing_rule_matches_parsed_commands(
    platform: Platform, api: httpx.Client, victims: list[Path]
) -> None:
    target = victims[0].name
    rule = api.post(
        "/v1/approval-rules",
        json={"tool_name": "bash", "agent_name": "admin", "command": f"rm -rf {target}"},
    ).json()
    try:
        covered = submit(api, f"rm  -rf '{target}'", params={"wait": 30})
        wider = submit(api, f"rm -rf {target} {victims[1].name}")
        chained = submit(api, f"rm -rf {target}; rm -rf {victims[1].name}")
    finally:
        api.delete(f"/v1/approval-rules/{rule['id']}")

    assert covered["status"] == "success"
    assert covered["metadata"]["approved_by"] == f"rule {rule['id']}"
    assert not victims[0].exists()
    assert wider["status"] == chained["status"] == "awaiting_approval"
    assert victims[1].exists()
    for parked in (wider, chained):
        api.post(f"/v1/calls/{parked['call_id']}/deny")


def test_unknown_and_malformed_decisions_are_4xx(api: httpx.Client) -> None:
    assert api.post("/v1/calls/no-such-call/approve").status_code == 404
    assert api.post("/v1/calls/bad%20id/approve").status_code == 422
    assert api.post("/v1/calls/x/deny", json={"reason": 5}).status_code == 422
    assert (
        api.post("/v1/approval-rules", json={"tool_name": "bash", "command": "a; b"}).status_code
        == 422
    )
    assert api.post("/v1/approval-rules", json={"tool_name": "nope"}).status_code == 404


@pytest.fixture(scope="module")
def strict(
    redis_url: str, platform_workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """An API that auto-approves nothing and lets approvals expire after 1 s (no workers)."""
    setup = Platform(
        redis_url,
        platform_workspace,
        tmp_path_factory.mktemp("strict"),
        extra_env={"TOOLRUN_APPROVAL_TTL_S": "1"},
        levels=(),
    )
    with running(setup) as started:
        yield started


def test_a_confirm_call_waits_then_expires_as_denied(
    strict: Platform, platform_workspace: Path
) -> None:
    (platform_workspace / "keep.txt").write_text("original\n")
    with httpx.Client(base_url=strict.base_url, headers=strict.headers, timeout=30) as api:
        parked = api.post(
            "/v1/calls",
            json={"tool_name": "write", "arguments": {"file_path": "keep.txt", "content": "new"}},
        ).json()
        assert parked["status"] == "awaiting_approval"
        assert parked["metadata"]["policy"] == "confirm"
        assert parked["error"] == "write replaces the existing file keep.txt"

        final = api.get(f"/v1/calls/{parked['call_id']}", params={"wait": 10}).json()
        record = next(
            i for i in api.get("/v1/approvals").json() if i["call_id"] == parked["call_id"]
        )

    assert final["status"] == "denied"
    assert (
        final["error"]
        == "write replaces the existing file keep.txt — not approved within 1 s, so denied"
    )
    assert record["status"] == "expired"
    assert (platform_workspace / "keep.txt").read_text() == "original\n"


def test_the_cli_lists_and_decides(
    platform: Platform, api: httpx.Client, victims: list[Path]
) -> None:
    first = submit(api, f"rm -rf {victims[0].name}")
    second = submit(api, f"rm -rf {victims[1].name}")

    listed = platform.cli("approvals", "list", "--json")
    approved = platform.cli("approvals", "approve", second["call_id"], "--reason", "ok")
    denied = platform.cli("approvals", "deny", first["call_id"])
    twice = platform.cli("approvals", "deny", first["call_id"])

    assert {first["call_id"], second["call_id"]} <= {
        i["call_id"] for i in json.loads(listed.stdout)
    }
    assert approved.returncode == 0, approved.stderr
    assert denied.returncode == 0, denied.stderr
    assert twice.returncode == 1
    assert "is not awaiting approval (it is denied)" in " ".join(twice.stderr.split())
    wait_for(lambda: not victims[1].exists(), 30, "the approved call to run")
    assert victims[0].exists()


def test_the_cli_review_prompts_for_each_call(
    platform: Platform, api: httpx.Client, victims: list[Path]
) -> None:
    parked = submit(api, f"rm -rf {victims[0].name}")
    others = pending_ids(api) - {parked["call_id"]}
    # Oldest first: everything else pending is skipped, then this call is approved.
    answers = "s\n" * len(others) + "a\nlooks fine\n"

    review = platform.cli("approvals", "--once", stdin=answers)

    assert review.returncode == 0, review.stderr
    assert f"rm -rf {victims[0].name}" in review.stdout
    assert "risk high" in " ".join(review.stdout.split())
    wait_for(lambda: not victims[0].exists(), 30, "the approved call to run")


def test_a_new_agent_with_a_revoked_ones_name_inherits_no_rule(
    platform: Platform, api: httpx.Client, victims: list[Path]
) -> None:
    platform.agent("heir", PermissionLevel.EXECUTE)
    command = f"rm -rf {victims[0].name}"
    rule = api.post(
        "/v1/approval-rules", json={"tool_name": "bash", "agent_name": "heir", "command": command}
    ).json()
    assert api.delete("/v1/agents/heir").status_code == 204
    token = platform.agent("heir", PermissionLevel.EXECUTE)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=platform.base_url, headers=headers, timeout=30) as heir:
            parked = submit(heir, command)
    finally:
        api.delete(f"/v1/approval-rules/{rule['id']}")

    assert parked["status"] == "awaiting_approval"
    assert victims[0].exists()
    api.post(f"/v1/calls/{parked['call_id']}/deny")


def test_a_call_from_a_revoked_agent_cannot_be_approved(
    platform: Platform, api: httpx.Client, victims: list[Path]
) -> None:
    token = platform.agent("leaver", PermissionLevel.EXECUTE)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=platform.base_url, headers=headers, timeout=30) as leaver:
        parked = submit(leaver, f"rm -rf {victims[0].name}")
    api.delete("/v1/agents/leaver")

    refused = api.post(f"/v1/calls/{parked['call_id']}/approve")

    assert refused.status_code == 409
    assert "was revoked" in refused.json()["detail"]
    assert api.post(f"/v1/calls/{parked['call_id']}/deny").status_code == 200
    assert victims[0].exists()


def test_an_id_still_in_the_inbox_cannot_be_parked_again(
    api: httpx.Client, redis_client: redis.Redis, victims: list[Path]
) -> None:
    """A parked call's record expired from Redis while its inbox entry stays: another
    call under the same id is a conflict, and neither the entry nor a record changes."""
    call_id = f"kept-{uuid.uuid4().hex[:8]}"
    first = submit(api, f"rm -rf {victims[0].name}", json_id=call_id)
    assert first["status"] == "awaiting_approval"
    redis_client.delete(keys.record(call_id))  # as its TTL would

    again = api.post(
        "/v1/calls",
        json={"id": call_id, "tool_name": "bash", "arguments": {"command": "rm -rf other"}},
    )

    assert again.status_code == 409, again.text
    assert "already exists" in again.json()["detail"]
    assert api.get(f"/v1/calls/{call_id}").status_code == 404  # no record left behind
    [entry] = [item for item in api.get("/v1/approvals").json() if item["call_id"] == call_id]
    assert entry["arguments"] == {"command": f"rm -rf {victims[0].name}"}
    assert entry["status"] == "pending"
    # Left as it is, the entry would wait for its expiry: give it its record back and deny.
    call = ToolCall(id=call_id, tool_name="bash", version="1.0.0", arguments=entry["arguments"])
    CallStore(redis_client, ttl_s=600).create(
        ToolResult.accepted(call, ToolStatus.AWAITING_APPROVAL), request=call.digest()
    )
    assert api.post(f"/v1/calls/{call_id}/deny").status_code == 200


def test_the_cli_takes_unique_prefixes_and_decides_in_bulk(
    platform: Platform, victims: list[Path]
) -> None:
    created = platform.cli("agents", "create", "bulky", "--ceiling", "execute")
    assert created.returncode == 0, created.stderr
    headers = {"Authorization": f"Bearer {created.stdout.strip()}"}
    stem = f"bulk-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=platform.base_url, headers=headers, timeout=30) as bulky:
        for n, victim in enumerate(victims):
            submit(bulky, f"rm -rf {victim.name}", json_id=f"{stem}-{n}x")

    ambiguous = platform.cli("approvals", "deny", stem)
    assert ambiguous.returncode == 2
    said = " ".join(ambiguous.stderr.split())
    assert f"'{stem}' begins 2 pending calls: {stem}-1x, {stem}-0x" in said

    one = platform.cli("approvals", "deny", f"{stem}-0")  # a unique prefix
    assert one.returncode == 0, one.stderr
    assert f"{stem}-0x: denied" in one.stderr

    both = platform.cli("approvals", "deny", "--all", "--agent", "bulky")
    assert both.returncode == 0, both.stderr
    assert f"{stem}-1x: denied" in both.stderr
    assert f"{stem}-0x" not in both.stderr  # decided already: no longer pending
    assert all(victim.exists() for victim in victims)

    nothing = platform.cli("approvals", "deny", "--all", "--agent", "bulky")
    assert "No pending call matches." in nothing.stderr
    mixed = platform.cli("approvals", "approve", f"{stem}-1x", "--all")
    assert mixed.returncode == 2
    assert "name the calls to decide, or give --all (not both)" in mixed.stderr


@pytest.mark.parametrize("status", ["expired", "approved"])
def test_an_empty_inbox_says_so(platform: Platform, status: str) -> None:
    items = json.loads(platform.cli("approvals", "list", "--status", status, "--json").stdout)
    listed = platform.cli("approvals", "list", "--status", status)

    assert listed.returncode == 0
    said_empty = f"The inbox has no {status} calls." in listed.stderr
    assert said_empty == (items == []), (items, listed.stderr)
    assert all(item["call_id"] in listed.stdout for item in items)  # whole ids, uncut

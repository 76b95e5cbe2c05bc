"""GET /v1/history and `toolrun history` on the running platform."""

from __future__ import annotations

import csv
import io
import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.integration.platform import Platform, wait_for
from toolrun.history.export import read_cell
from toolrun.permissions.levels import PermissionLevel


def client_for(platform: Platform, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=platform.base_url, headers=headers, timeout=60)


def rows(api: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = api.get("/v1/history", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["rows"])


def test_calls_are_recorded_by_the_workers_and_the_api(
    platform: Platform, api: httpx.Client
) -> None:
    token = platform.agent("historian", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        ids = [
            agent.post(
                "/v1/calls",
                params={"wait": 30},
                json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}},
            ).json()["call_id"]
            for _ in range(3)
        ]
        blocked = agent.post(
            "/v1/calls", json={"tool_name": "write", "arguments": {"file_path": "x", "content": ""}}
        ).json()

    wait_for(lambda: len(rows(api, agent="historian")) == 4, 30, "four history rows")
    recorded = rows(api, agent="historian")
    newest_reads = rows(api, agent="historian", tool="read", limit=2)

    assert [r["call_id"] for r in newest_reads] == ids[::-1][:2]
    read = newest_reads[0]
    assert read["status"] == "success"
    assert read["worker"].startswith("read_only@")
    assert read["cpu_s"] is not None
    assert read["queue_wait_ms"] is not None
    assert read["output_bytes"] > 0
    assert read["arguments"] == {"file_path": "hello.txt"}
    [refused] = [r for r in recorded if r["status"] == "blocked"]
    assert refused["call_id"] == blocked["call_id"]
    assert refused["error"] == "agent may not call this tool (needs read_write, has read_only)"
    assert refused["worker"] is None  # the API stopped it


def test_failures_carry_their_type(platform: Platform, api: httpx.Client) -> None:
    token = platform.agent("failer", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        agent.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "read", "arguments": {"file_path": "missing.txt"}},
        )

    wait_for(lambda: rows(api, agent="failer"), 30, "the failed call's row")
    [failed] = rows(api, agent="failer", status="error")
    assert failed["error_type"] == "ToolExecutionError"
    assert "missing.txt" in failed["error"]


def test_an_agent_sees_only_its_own_history(platform: Platform, api: httpx.Client) -> None:
    token = platform.agent("private", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        agent.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "read", "arguments": {"file_path": "hello.txt"}},
        )
        wait_for(lambda: rows(agent), 30, "its row")
        mine = rows(agent, limit=1000)
        asked_for_others = rows(agent, agent="admin", limit=1000)

    me = api.get("/v1/agents").json()
    private_id = next(a["id"] for a in me if a["name"] == "private")
    assert {r["agent_id"] for r in mine} == {private_id}
    assert {r["agent_id"] for r in asked_for_others} == {private_id}
    assert {r["agent_name"] for r in mine} == {"private"}  # named, as approvals are
    exported = api.get("/v1/history/export", params={"agent": "private"}).json()
    assert {r["agent_name"] for r in exported} == {"private"}
    shown = platform.cli("history", "--agent", "private")
    assert shown.returncode == 0, shown.stderr
    assert "private" in shown.stdout
    assert all(r["call_id"] in shown.stdout for r in mine[:20])  # whole ids


def test_pages_and_bad_queries(api: httpx.Client) -> None:
    first = api.get("/v1/history", params={"limit": 2}).json()
    second = api.get("/v1/history", params={"limit": 2, "cursor": first["next_cursor"]}).json()

    assert not {r["call_id"] for r in first["rows"]} & {r["call_id"] for r in second["rows"]}
    assert api.get("/v1/history", params={"cursor": "junk"}).status_code == 422
    assert api.get("/v1/history", params={"agent": "nobody-here"}).status_code == 404
    assert api.get("/v1/history", params={"status": "bogus"}).status_code == 422
    assert api.get("/v1/history", params={"limit": 0}).status_code == 422


def test_the_cli_lists_recent_calls(platform: Platform) -> None:
    done = platform.cli("history", "--tool", "read", "--limit", "3", "--json")
    table = platform.cli("history", "--limit", "5")

    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert 0 < len(listed) <= 3
    assert {r["tool_name"] for r in listed} == {"read"}
    assert table.returncode == 0, table.stderr
    shown = json.loads(platform.cli("history", "--limit", "5", "--json").stdout)
    lines = [line for line in table.stdout.splitlines() if not line.startswith("    ")]
    # One line a call, newest first, ending with its whole id.
    assert [line.split()[-1] for line in lines] == [r["call_id"] for r in shown]


def _exporter_calls(platform: Platform) -> str:
    """Three calls by a fresh agent (two reads, one failed read); returns its name."""
    name = f"exporter-{uuid.uuid4().hex[:6]}"
    token = platform.agent(name, PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        for path in ("hello.txt", "hello.txt", 'missing, "quoted".txt'):
            agent.post(
                "/v1/calls",
                params={"wait": 30},
                json={"tool_name": "read", "arguments": {"file_path": path}},
            )
    return name


def test_exports_stream_the_rows_history_lists(platform: Platform, api: httpx.Client) -> None:
    name = _exporter_calls(platform)
    wait_for(lambda: len(rows(api, agent=name)) == 3, 30, "three history rows")
    listed = rows(api, agent=name)

    as_json = api.get("/v1/history/export", params={"agent": name, "format": "json"})
    as_csv = api.get("/v1/history/export", params={"agent": name, "format": "csv"})
    errors = api.get("/v1/history/export", params={"agent": name, "status": "error"}).json()

    assert as_json.status_code == 200
    assert as_json.json() == listed
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert "attachment" in as_csv.headers["content-disposition"]
    reader = csv.DictReader(io.StringIO(as_csv.content.decode("utf-8-sig"), newline=""))
    parsed = [{k: read_cell(k, v) for k, v in row.items()} for row in reader]
    assert parsed == listed
    assert [r["arguments"]["file_path"] for r in errors] == ['missing, "quoted".txt']
    assert api.get("/v1/history/export", params={"format": "xml"}).status_code == 422


def test_an_agent_exports_only_its_own_calls(platform: Platform, api: httpx.Client) -> None:
    token = platform.agent(f"quiet-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)
    with client_for(platform, token) as agent:
        exported = agent.get("/v1/history/export", params={"agent": "admin"})

    assert exported.status_code == 200
    assert exported.json() == []


def test_the_cli_exports_whole_files_or_none(platform: Platform, tmp_path: Path) -> None:
    name = _exporter_calls(platform)
    target = tmp_path / "calls.csv"
    wait_for(
        lambda: len(json.loads(platform.cli("history", "--agent", name, "--json").stdout)) == 3,
        30,
        "three history rows",
    )

    done = platform.cli("history", "export", "--agent", name, "--output", str(target))
    refused = platform.cli(
        "history", "export", "--output", str(tmp_path / "x.json"), "--api", "http://127.0.0.1:1"
    )
    nowhere = platform.cli("history", "export", "--output", str(tmp_path / "no" / "x.csv"))

    assert done.returncode == 0, done.stderr
    with target.open(encoding="utf-8-sig", newline="") as file:
        assert len(list(csv.DictReader(file))) == 3
    assert refused.returncode == 2
    assert nowhere.returncode == 2
    assert "no directory" in nowhere.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calls.csv"]  # nothing half-written


def test_stats_over_the_api_and_the_cli(platform: Platform, api: httpx.Client) -> None:
    token = platform.agent(f"curious-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)
    before = {t["tool"]: t for t in api.get("/v1/stats").json()["tools"]}
    name = _exporter_calls(platform)
    wait_for(lambda: len(rows(api, agent=name)) == 3, 30, "three history rows")

    answer = api.get("/v1/stats", params={"since": time.time() - 3600}).json()
    read = next(t for t in answer["tools"] if t["tool"] == "read")
    by_version = api.get("/v1/stats", params={"by": "version"}).json()["tools"]
    with client_for(platform, token) as agent:
        forbidden = agent.get("/v1/stats")
    backwards = api.get("/v1/stats", params={"since": 10, "until": 5})
    table = platform.cli("stats", "--since", "1h")
    as_json = platform.cli("stats", "--json")
    bad = platform.cli("stats", "--since", "yesterday")

    earlier = before.get("read", {"calls": 0, "failures": 0})
    assert read["calls"] - earlier["calls"] >= 3
    assert read["failures"] - earlier["failures"] >= 1
    assert read["p95_ms"] >= read["p50_ms"] > 0
    assert all(t["version"] for t in by_version)
    assert forbidden.status_code == 403
    assert backwards.status_code == 422
    assert table.returncode == 0, table.stderr
    assert "read" in table.stdout
    assert "p95" in table.stdout
    assert re.search(r"Calls that ended from \S+ \S+ to \S+ \S+:", table.stdout)
    [header] = [line.split() for line in table.stdout.splitlines() if "refused" in line]
    assert header == ["tool", "calls", "refused", "failed", "p50", "p95", "cpu", "worker", "RSS"]
    [read_line] = [
        line.split() for line in table.stdout.splitlines() if line.split()[:1] == ["read"]
    ]
    assert read_line[1] == f"{read['calls']:,}"  # nothing cut in 80 columns
    assert json.loads(as_json.stdout)["by"] == "tool"
    assert bad.returncode == 2
    assert "not a duration" in bad.stderr


def test_the_cli_prunes(platform: Platform) -> None:
    pruned = platform.cli("history", "prune", "--older-than", "3650d")
    bad = platform.cli("history", "prune", "--older-than", "-5d")

    assert pruned.returncode == 0, pruned.stderr
    assert "pruned 0 calls" in pruned.stdout
    assert bad.returncode == 2


def test_windows_must_be_finite(api: httpx.Client) -> None:
    for params in ({"since": "nan"}, {"until": "inf"}, {"since": "-inf"}):
        assert api.get("/v1/stats", params=params).status_code == 422
        assert api.get("/v1/history", params=params).status_code == 422

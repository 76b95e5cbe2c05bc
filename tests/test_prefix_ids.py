"""Ids on the command line: a unique prefix stands for the whole id (calls, runs, rules,
pending calls), an ambiguous one is a usage error naming the matches, and a whole id costs
no more requests than before (a scripted in-process API)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from toolrun.cli import app, approvals, calls, dag, history, selection
from toolrun.client import Client
from toolrun.config import Settings

CALLS = ["3f2a9c01", "3f2b7d02", "8e11aa03"]  # ended, in the history
PARKED = "3f2a0000"  # waiting in the approval inbox
RUNS = ["run-alpha", "run-beta", "other"]
RULES = ["a1b2c3d4e5f6", "a1b2ffffffff", "9d8c7b6a5f4e"]


def _result(call_id: str) -> dict[str, Any]:
    status = "awaiting_approval" if call_id == PARKED else "success"
    return {"call_id": call_id, "tool_name": "read", "status": status, "output": call_id}


def _run(run_id: str) -> dict[str, Any]:
    return {
        "id": run_id,
        "agent_id": "agent",
        "status": "running",
        "created_at": 1.0,
        "finished_at": None,
        "error": None,
        "cancel_requested": False,
        "max_concurrency": None,
        "counts": {"running": 1},
        "nodes": [
            {
                "id": "only",
                "tool": "read",
                "version": "1.0.0",
                "state": "succeeded",
                "attempts": 1,
                "call_id": CALLS[2],
                "depends_on": [],
                "started_at": 1.0,
                "finished_at": 2.0,
                "not_before": None,
                "output": None,
                "error": None,
            }
        ],
    }


class FakeApi:
    """Calls, runs and rules by whole id only, as the real API; their listings (`opened`:
    the calls GET /v1/calls lists; None: an API older than that route, 404)."""

    def __init__(self, *, inbox_status: int = 200, opened: list[str] | None = None) -> None:
        self.inbox_status = inbox_status  # 403: an agent's token
        self.opened = opened
        self.requests: list[str] = []
        self.removed: list[str] = []
        self.cancelled: list[str] = []
        self.rated: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path, method = request.url.path, request.method
        self.requests.append(f"{method} {path}")
        last = path.rsplit("/", 1)[-1]
        if method == "GET" and path == "/v1/history":
            parent = request.url.params.get("parent")
            rows = [{"call_id": call_id} for call_id in CALLS]
            if parent is not None:  # the calls a Task call made: CALLS[0] made one
                rows = [{"call_id": "child-of-" + parent}] if parent == CALLS[0] else []
            return httpx.Response(200, json={"rows": rows, "next_cursor": None})
        if method == "POST" and path.endswith("/feedback") and path.split("/")[3] in CALLS:
            self.rated.append(path.split("/")[3])
            return httpx.Response(204)
        if method == "GET" and path == "/v1/calls" and self.opened is not None:
            return httpx.Response(200, json=[{"call_id": call_id} for call_id in self.opened])
        if method == "GET" and path.startswith("/v1/calls/") and last in (self.opened or []):
            return httpx.Response(200, json=_result(last) | {"status": "running"})
        if method == "GET" and path == "/v1/approvals":
            if self.inbox_status != 200:
                return httpx.Response(self.inbox_status, json={"detail": "operators only"})
            return httpx.Response(200, json=[{"call_id": PARKED}])
        if method == "GET" and path.startswith("/v1/calls/") and last in [*CALLS, PARKED]:
            return httpx.Response(200, json=_result(last))
        if method == "POST" and path == f"/v1/calls/{PARKED}/approve":
            return httpx.Response(200, json=_result(PARKED) | {"status": "queued"})
        return self._runs_and_lists(method, path, last)

    def _runs_and_lists(self, method: str, path: str, last: str) -> httpx.Response:
        if method == "GET" and path == "/v1/dags":
            return httpx.Response(200, json={"runs": [_run(r) | {"nodes": None} for r in RUNS]})
        if method == "GET" and path.startswith("/v1/dags/") and last in RUNS:
            return httpx.Response(200, json=_run(last))
        if method == "POST" and path.endswith("/cancel") and path.split("/")[3] in RUNS:
            self.cancelled.append(path.split("/")[3])
            return httpx.Response(202, json=_run(path.split("/")[3]))
        if method == "GET" and path == "/v1/whitelist":
            return httpx.Response(200, json=[{"id": entry} for entry in RULES])
        if method == "DELETE" and path.startswith("/v1/whitelist/") and last in RULES:
            self.removed.append(last)
            return httpx.Response(204)
        if method == "GET" and path == "/v1/approval-rules":
            return httpx.Response(200, json=[{"id": rule} for rule in RULES])
        if method == "DELETE" and path.startswith("/v1/approval-rules/") and last in RULES:
            self.removed.append(last)
            return httpx.Response(204)
        return httpx.Response(404, json={"detail": f"nothing at {path}"})


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeApi]:
    """Point `toolrun calls`, `dag` and `approvals` at a FakeApi."""

    def install(**options: Any) -> FakeApi:
        api = FakeApi(**options)

        def client(settings: Settings, url: str | None = None) -> Client:
            faked = Client("http://fake")
            faked.close()
            faked._http = httpx.Client(base_url="http://fake", transport=httpx.MockTransport(api))
            return faked

        for module in (calls, dag, approvals, history, selection):
            monkeypatch.setattr(module, "api_client", client)
        return api

    return install


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args), env={"TOOLRUN_TOOL_MODULES": None})
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    return result


def test_calls_show_takes_a_unique_prefix_of_an_ended_call(
    fake_api: Callable[..., FakeApi],
) -> None:
    api = fake_api()
    result = invoke("calls", "show", "8e1", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["call_id"] == CALLS[2]
    assert api.requests[-1] == f"GET /v1/calls/{CALLS[2]}"


def test_calls_show_finds_a_parked_call_by_prefix(fake_api: Callable[..., FakeApi]) -> None:
    fake_api()
    result = invoke("calls", "show", "3f2a0", "--json")

    assert result.exit_code == 3, result.output  # not ended yet
    assert json.loads(result.stdout)["call_id"] == PARKED


def test_calls_show_of_a_whole_id_makes_one_request(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()
    result = invoke("calls", "show", CALLS[0])

    assert result.exit_code == 0, result.output
    assert api.requests == [f"GET /v1/calls/{CALLS[0]}"]


def test_an_ambiguous_call_prefix_is_a_usage_error_naming_the_matches(
    fake_api: Callable[..., FakeApi],
) -> None:
    fake_api()
    result = invoke("calls", "show", "3f2")

    assert result.exit_code == 2
    assert f"'3f2' begins 3 calls: {CALLS[0]}, {CALLS[1]}, {PARKED}" in " ".join(
        result.stderr.split()
    )


def test_an_agents_token_resolves_among_its_history(fake_api: Callable[..., FakeApi]) -> None:
    fake_api(inbox_status=403)
    result = invoke("calls", "show", "3f2b", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["call_id"] == CALLS[1]


def test_an_unknown_call_is_the_apis_404(fake_api: Callable[..., FakeApi]) -> None:
    fake_api()
    result = invoke("calls", "show", "ffff")

    assert result.exit_code == 1
    assert "refused (404): nothing at /v1/calls/ffff" in result.stderr


@pytest.mark.parametrize(
    ("args", "whole"),
    [
        (["dag", "status", "run-a", "--json"], "run-alpha"),
        (["dag", "output", "oth", "only", "--json"], "other"),
    ],
)
def test_dag_commands_take_a_unique_run_prefix(
    fake_api: Callable[..., FakeApi], args: list[str], whole: str
) -> None:
    api = fake_api()
    result = invoke(*args)

    assert result.exit_code == 0, result.output
    assert f"GET /v1/dags/{whole}" in api.requests


def test_dag_cancel_takes_a_unique_run_prefix(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()
    result = invoke("dag", "cancel", "run-b")

    assert result.exit_code == 0, result.output
    assert api.cancelled == ["run-beta"]


def test_dag_status_of_a_whole_id_makes_one_request(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()
    result = invoke("dag", "status", "other", "--json")

    assert result.exit_code == 0, result.output
    assert api.requests == ["GET /v1/dags/other"]


def test_an_ambiguous_run_prefix_is_a_usage_error(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()
    result = invoke("dag", "cancel", "run-")

    assert result.exit_code == 2
    assert "'run-' begins 2 runs: run-alpha, run-beta" in result.stderr
    assert api.cancelled == []


def test_rules_remove_takes_a_unique_prefix(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()
    result = invoke("approvals", "rules", "remove", "9d8")

    assert result.exit_code == 0, result.output
    assert api.removed == [RULES[2]]


def test_an_ambiguous_rule_prefix_removes_nothing(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()
    result = invoke("approvals", "rules", "remove", "a1b2")

    assert result.exit_code == 2
    assert f"'a1b2' begins 2 rules: {RULES[0]}, {RULES[1]}" in result.stderr
    assert api.removed == []


def test_approve_still_takes_a_unique_prefix_of_a_pending_call(
    fake_api: Callable[..., FakeApi],
) -> None:
    api = fake_api()
    result = invoke("approvals", "approve", "3f2a0")

    assert result.exit_code == 0, result.output
    assert api.requests[-1] == f"POST /v1/calls/{PARKED}/approve"
    assert f"{PARKED}: queued" in result.stderr


def test_feedback_takes_a_unique_prefix_of_an_ended_call(
    fake_api: Callable[..., FakeApi],
) -> None:
    api = fake_api()

    rated = invoke("feedback", "3f2a9", "--rating", "4")
    ambiguous = invoke("feedback", "3f2", "--rating", "4")

    assert rated.exit_code == 0, rated.output
    assert api.rated == ["3f2a9c01"]
    assert "rated 3f2a9c01 4/5" in rated.output
    assert ambiguous.exit_code == 2
    assert api.rated == ["3f2a9c01"]


def test_history_parent_takes_a_unique_prefix(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()

    by_prefix = invoke("history", "--parent", "3f2a9", "--json")
    whole = len(api.requests)
    by_whole = invoke("history", "--parent", "3f2a9c01", "--json")

    assert by_prefix.exit_code == 0, by_prefix.output
    assert json.loads(by_prefix.stdout) == [{"call_id": "child-of-3f2a9c01"}]
    assert json.loads(by_whole.stdout) == [{"call_id": "child-of-3f2a9c01"}]
    assert len(api.requests) == whole + 1  # a whole id: one request


def test_whitelist_remove_takes_a_unique_prefix(fake_api: Callable[..., FakeApi]) -> None:
    api = fake_api()

    removed = invoke("whitelist", "remove", "9d8")
    ambiguous = invoke("whitelist", "remove", "a1b2")

    assert removed.exit_code == 0, removed.output
    assert "removed 9d8c7b6a5f4e" in removed.output
    assert ambiguous.exit_code == 2
    assert api.removed == ["9d8c7b6a5f4e"]


def test_calls_show_finds_a_running_call_by_prefix(fake_api: Callable[..., FakeApi]) -> None:
    fake_api(opened=["77aa0101"])

    shown = invoke("calls", "show", "77a", "--json")

    assert shown.exit_code == 3, shown.output  # not ended yet
    assert json.loads(shown.stdout)["call_id"] == "77aa0101"

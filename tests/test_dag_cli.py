"""`toolrun dag` and the SDK's DAG methods with no platform: local commands on plan files,
the run view's rendering, and the API commands against a scripted in-process API."""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from toolrun.cli import _dag_view, app, dag
from toolrun.client import ApiError, AsyncClient, Client
from toolrun.config import Settings
from toolrun.dag import load_plan

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TWO_NODES = """\
nodes:
  - id: find
    tool: glob
    arguments: {pattern: "**/*.py"}
  - id: first
    tool: read
    arguments: {file_path: {$ref: "find.output.files[0]"}}
  - id: last
    tool: read
    arguments: {file_path: notes.txt}
    depends_on: [first]
"""
CYCLE = """\
nodes:
  - {id: a, tool: read, arguments: {file_path: {$ref: b.output.content}}}
  - {id: b, tool: read, arguments: {file_path: x.txt}, depends_on: [a]}
"""


def _flat(text: str) -> str:
    """Output with colours removed and rich's line wrapping undone."""
    return " ".join(ANSI.sub("", text).split())


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args), env={"TOOLRUN_TOOL_MODULES": None})
    # Anything but a clean exit is an exception CliRunner swallowed: a crash, not a message.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def plan_file(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(text: str, name: str = "plan.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def test_validate_counts_the_nodes_of_a_valid_plan(plan_file: Callable[..., Path]) -> None:
    result = invoke("dag", "validate", str(plan_file(TWO_NODES)))

    assert result.exit_code == 0, result.output
    assert result.stdout == "valid: 3 nodes\n"


def test_validate_reads_json_by_its_suffix(plan_file: Callable[..., Path]) -> None:
    plan = {"nodes": [{"id": "a", "tool": "read", "arguments": {"file_path": "x"}}]}
    result = invoke("dag", "validate", str(plan_file(json.dumps(plan), "plan.json")))

    assert result.exit_code == 0, result.output
    assert result.stdout == "valid: 1 node\n"


def test_validate_names_the_cycle(plan_file: Callable[..., Path]) -> None:
    result = invoke("dag", "validate", str(plan_file(CYCLE)))

    assert result.exit_code == 1
    assert "dependency cycle: a → b → a" in _flat(result.stderr)


def test_validate_lists_every_problem_at_once(plan_file: Callable[..., Path]) -> None:
    text = """\
nodes:
  - {id: a, tool: nope}
  - {id: b, tool: read, arguments: {file_path: {$ref: zz.output}}}
  - {id: c, tool: read, arguments: {file_path: {$ref: a.outputs}}}
"""
    result = invoke("dag", "validate", str(plan_file(text)))

    assert result.exit_code == 1
    problems = [line for line in result.stderr.splitlines() if line.startswith("  - ")]
    assert len(problems) == 3, result.stderr
    assert "node 'a': unknown tool: nope" in problems[0]
    assert "$ref 'zz.output' names unknown node 'zz'" in problems[1]
    assert "$ref 'a.outputs'" in problems[2]


def test_validate_explains_malformed_yaml(plan_file: Callable[..., Path]) -> None:
    path = plan_file("nodes:\n  - id: a\n    tool: [unclosed\n")
    result = invoke("dag", "validate", str(path))

    assert result.exit_code == 1
    assert f"{path} is not valid YAML or JSON: line 4, column 1" in _flat(result.stderr)


def test_validate_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("dag", "validate", str(tmp_path / "absent.yaml"))

    assert result.exit_code == 2
    assert "cannot read" in result.stderr
    assert "No such file or directory" in _flat(result.stderr)


def test_validate_of_a_binary_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "plan.yaml").write_bytes(b"\xff\xfe\x00")
    result = invoke("dag", "validate", str(tmp_path / "plan.yaml"))

    assert result.exit_code == 2
    assert "not UTF-8 text" in result.stderr


def test_graph_draws_data_and_order_arrows(plan_file: Callable[..., Path]) -> None:
    result = invoke("dag", "graph", str(plan_file(TWO_NODES)))

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "flowchart TD",
        '    n0["find<br/>glob"]',
        '    n1["first<br/>read"]',
        '    n2["last<br/>read"]',
        "    n0 --> n1",
        "    n1 -.-> n2",
    ]


def test_graph_draws_a_cycle(plan_file: Callable[..., Path]) -> None:
    result = invoke("dag", "graph", str(plan_file(CYCLE)))

    assert result.exit_code == 0, result.output
    assert {"    n1 --> n0", "    n0 -.-> n1"} <= set(result.stdout.splitlines())


def test_graph_of_a_plan_that_does_not_parse(plan_file: Callable[..., Path]) -> None:
    result = invoke("dag", "graph", str(plan_file("nodes: []\nextra: 1\n")))

    assert result.exit_code == 1
    assert "extra: unknown field" in _flat(result.stderr)


# The run view ---------------------------------------------------------------------------

VIEW: dict[str, Any] = {
    "id": "r1",
    "agent_id": "a" * 32,
    "status": "running",
    "created_at": 90.0,
    "finished_at": None,
    "error": None,
    "cancel_requested": True,
    "max_concurrency": None,
    "counts": {"succeeded": 1, "running": 1, "pending": 1, "failed": 1, "skipped": 0},
    "nodes": [
        {"id": "done", "tool": "glob", "version": "1.0.0", "state": "succeeded", "attempts": 1,
         "started_at": 100.0, "finished_at": 101.5, "not_before": None, "error": None},
        {"id": "busy", "tool": "sleepy", "version": None, "state": "running", "attempts": 2,
         "started_at": 95.0, "finished_at": None, "not_before": None, "error": None},
        {"id": "later", "tool": "read", "version": None, "state": "pending", "attempts": 1,
         "started_at": None, "finished_at": None, "not_before": 130.0,
         "error": "[bold]boom[/] \x1b[31m" + "x" * 80 + "\nsecond line"},
        {"id": "broke", "tool": "read", "version": None, "state": "failed", "attempts": 3,
         "started_at": 10.0, "finished_at": 100.0, "not_before": None, "error": "gone"},
    ],
}  # fmt: skip


def _rendered(view: dict[str, Any], now: float = 100.0) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(_dag_view.render_run(view, now=now))
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_render_run_shows_the_header_and_a_row_per_node() -> None:
    text = _rendered(VIEW)
    lines = text.splitlines()

    assert lines[0] == (
        "run r1 running: 1 running, 1 pending, 1 succeeded, 1 failed (cancel requested)"
    )
    rows = {line.split()[1]: _flat(line) for line in lines if line.startswith("│")}
    assert rows["done"].startswith("│ done │ glob 1.0.0 │ succeeded │ 1 │ 1.50 s │")
    assert rows["busy"].startswith("│ busy │ sleepy │ running │ 2 │ 5.00 s │")
    assert rows["later"].startswith("│ later │ read │ pending │ 1 │ retry in 30.0 s │")
    assert rows["broke"] == "│ broke │ read │ failed │ 3 │ 1m30s │ gone │"


def test_render_run_shows_errors_as_inert_short_text() -> None:
    text = _rendered(VIEW)

    assert "[bold]boom[/] \\x1b[31m" in text  # no markup, no terminal escape
    assert "\x1b" not in text
    assert "second line" not in text
    error = next(line for line in text.splitlines() if "boom" in line).split("│")[-2].strip()
    assert error.endswith("x…")
    assert len(error) == _dag_view.ERROR_WIDTH + len("\\x1b") - 1


def test_render_run_of_a_failed_run_says_why() -> None:
    view = VIEW | {"status": "failed", "error": "node 'broke' failed", "cancel_requested": False}
    lines = _rendered(view).splitlines()

    assert lines[0].startswith("run r1 failed: ")
    assert lines[1] == "node 'broke' failed"


def test_runs_table_shows_counts_and_time() -> None:
    runs = [{k: v for k, v in VIEW.items() if k != "nodes"} | {"finished_at": 150.0}]
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(_dag_view.runs_table(runs, now=1000.0))
    assert isinstance(console.file, io.StringIO)
    row = _flat(next(line for line in console.file.getvalue().splitlines() if "r1" in line))

    assert "│ r1 │ running │ aaaaaaaa │" in row
    assert row.endswith("│ 1m00s │ 1 running, 1 pending, 1 succeeded, 1 failed │")


def test_duration_reads_naturally() -> None:
    assert [_dag_view.duration(s) for s in (0.42, 12.34, 125, 3720)] == [
        "0.42 s",
        "12.3 s",
        "2m05s",
        "1h02m",
    ]


# Against a scripted API ------------------------------------------------------------------


def _node(node_id: str, state: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "tool": "read",
        "version": "1.0.0",
        "state": state,
        "attempts": 0 if state == "pending" else 1,
        "call_id": None,
        "depends_on": [],
        "started_at": None,
        "finished_at": None,
        "not_before": None,
        "output": None,
        "error": None,
    } | fields


def _view(status: str, *nodes: dict[str, Any], **fields: Any) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node["state"]] = counts.get(node["state"], 0) + 1
    return {
        "id": "run-1",
        "agent_id": "agent",
        "status": status,
        "created_at": 1.0,
        "finished_at": None if status == "running" else 2.0,
        "error": None,
        "cancel_requested": False,
        "max_concurrency": None,
        "counts": counts,
        "nodes": list(nodes),
    } | fields


class FakeDagApi:
    """POST /v1/dags answers the first view (or `refusal`); each GET of the run answers
    the next one, staying on the last."""

    def __init__(self, *views: dict[str, Any], refusal: httpx.Response | None = None) -> None:
        self.views = list(views)
        self.refusal = refusal
        self.bodies: list[dict[str, Any]] = []
        self.gets = 0
        self.list_params: dict[str, str] = {}
        self.interrupt_at: int | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/dags":
            self.bodies.append(json.loads(request.content))
            return self.refusal or httpx.Response(201, json=self.views[0])
        if request.method == "GET" and path == "/v1/dags":
            self.list_params = dict(request.url.params)
            summary = {k: v for k, v in self.views[-1].items() if k != "nodes"}
            return httpx.Response(200, json={"runs": [summary]})
        if request.method == "GET" and path == "/v1/dags/run-1":
            self.gets += 1
            if self.gets == self.interrupt_at:
                raise KeyboardInterrupt
            return httpx.Response(200, json=self.views[min(self.gets, len(self.views) - 1)])
        if request.method == "POST" and path == "/v1/dags/run-1/cancel":
            return httpx.Response(202, json=self.views[-1] | {"cancel_requested": True})
        return httpx.Response(404, json={"detail": f"no run at {path}"})


def _faked(client: Client, api: FakeDagApi) -> Client:
    client.close()
    client._http = httpx.Client(base_url="http://fake", transport=httpx.MockTransport(api))
    return client


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeDagApi]:
    """Point `toolrun dag` at a FakeDagApi built from the given views."""

    def install(*views: dict[str, Any], **options: Any) -> FakeDagApi:
        api = FakeDagApi(*views, **options)

        def client(settings: Settings, url: str | None = None) -> Client:
            return _faked(Client("http://fake"), api)

        monkeypatch.setattr(dag, "api_client", client)
        return api

    monkeypatch.setattr(dag, "POLL_S", 0.0)
    return install


RUNNING = _view("running", _node("a", "running", started_at=1.0), _node("b", "pending"))
SUCCEEDED = _view(
    "succeeded",
    _node("a", "succeeded", started_at=1.0, finished_at=1.5, output={"content": "hi"}),
    _node("b", "succeeded", started_at=1.5, finished_at=1.75),
)
FAILED = _view(
    "failed",
    _node("a", "failed", started_at=1.0, finished_at=1.5, error="no such file: x.txt"),
    _node("b", "upstream_failed"),
    error="node 'a' failed",
)


def test_run_prints_the_new_runs_id(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    api = fake_api(RUNNING)
    result = invoke("dag", "run", str(plan_file(TWO_NODES)), "--id", "run-1")

    assert result.exit_code == 0, result.output
    assert result.stdout == "run-1\n"
    assert "toolrun dag status run-1 --watch" in result.stderr
    assert api.bodies[0]["id"] == "run-1"
    sent = api.bodies[0]["plan"]
    assert sent["nodes"][1]["arguments"] == {"file_path": {"$ref": "find.output.files[0]"}}
    assert "version" not in sent["nodes"][0]  # None fields are left out


def test_run_wait_follows_the_run_to_success(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    api = fake_api(RUNNING, RUNNING, SUCCEEDED)
    result = invoke("dag", "run", str(plan_file(TWO_NODES)), "--wait")

    assert result.exit_code == 0, result.output
    assert api.gets == 2
    assert "run run-1 succeeded: 2 succeeded" in _flat(result.stdout)
    assert "│ a │ read 1.0.0 │ succeeded │ 1 │ 0.50 s │" in _flat(result.stdout)


def test_run_wait_json_prints_the_final_view_and_exits_1_on_failure(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    fake_api(RUNNING, FAILED)
    result = invoke("dag", "run", str(plan_file(TWO_NODES)), "--wait", "--json")

    assert result.exit_code == 1
    assert json.loads(result.stdout) == FAILED


def test_run_lists_the_problems_the_api_finds_and_exits_2(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    problems = ["node 'a': unknown tool: nope", "node 'b': read is above your ceiling"]
    refusal = httpx.Response(
        422, json={"detail": "invalid plan: " + "; ".join(problems), "problems": problems}
    )
    fake_api(RUNNING, refusal=refusal)
    path = plan_file(TWO_NODES)
    result = invoke("dag", "run", str(path), "--wait")

    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"invalid plan {path}:", *(f"  - {p}" for p in problems)]


def test_run_of_a_taken_id_is_a_usage_error(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    fake_api(RUNNING, refusal=httpx.Response(409, json={"detail": "run run-1 exists"}))
    result = invoke("dag", "run", str(plan_file(TWO_NODES)), "--id", "run-1")

    assert result.exit_code == 2
    assert "error: run run-1 exists" in result.stderr


def test_run_of_a_malformed_plan_never_reaches_the_api(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    api = fake_api(RUNNING)
    result = invoke("dag", "run", str(plan_file("nodes:\n  - {id: 1a, tool: read}\n")))

    assert result.exit_code == 2
    assert "nodes[0].id: String should match pattern" in _flat(result.stderr)
    assert api.bodies == []


def test_ctrl_c_stops_watching_and_says_the_run_goes_on(
    fake_api: Callable[..., FakeDagApi], plan_file: Callable[..., Path]
) -> None:
    api = fake_api(RUNNING)
    api.interrupt_at = 3
    result = invoke("dag", "run", str(plan_file(TWO_NODES)), "--wait")

    assert result.exit_code == 130
    said = _flat(result.stderr)
    assert "stopped watching; run run-1 goes on" in said
    assert "toolrun dag cancel run-1" in said


def test_status_shows_the_table_and_watch_exits_by_outcome(
    fake_api: Callable[..., FakeDagApi],
) -> None:
    fake_api(RUNNING, FAILED)
    shown = invoke("dag", "status", "run-1")
    watched = invoke("dag", "status", "run-1", "--watch")

    assert shown.exit_code == 0, shown.output
    assert "run run-1 failed: 1 failed, 1 upstream_failed" in _flat(shown.stdout)
    assert "│ a │ read 1.0.0 │ failed │ 1 │ 0.50 s │ no such file:" in _flat(shown.stdout)
    assert watched.exit_code == 1


def test_status_of_an_unknown_run_is_refused(fake_api: Callable[..., FakeDagApi]) -> None:
    fake_api(RUNNING)
    result = invoke("dag", "status", "nope")

    assert result.exit_code == 1
    assert "refused (404): no run at /v1/dags/nope" in _flat(result.stderr)


def test_list_and_cancel(fake_api: Callable[..., FakeDagApi]) -> None:
    api = fake_api(RUNNING)
    listed = invoke("dag", "list", "--status", "running", "--limit", "5", "--json")
    cancelled = invoke("dag", "cancel", "run-1")

    assert listed.exit_code == 0, listed.output
    assert [run["id"] for run in json.loads(listed.stdout)] == ["run-1"]
    assert api.list_params == {"status": "running", "limit": "5"}
    assert cancelled.exit_code == 0, cancelled.output
    assert "cancel requested" in cancelled.stderr


def test_list_refuses_an_unknown_status() -> None:
    result = invoke("dag", "list", "--status", "sleeping")

    assert result.exit_code == 2


# The SDK -------------------------------------------------------------------------------


def test_list_dags_sends_its_filters() -> None:
    api = FakeDagApi(RUNNING)
    with _faked(Client("http://fake"), api) as client:
        runs = client.list_dags(status="running", limit=5)
        client.list_dags()

    assert [run["id"] for run in runs] == ["run-1"]
    assert api.list_params == {"limit": "50"}


def test_submit_plan_takes_a_plan_model_or_its_json_form() -> None:
    api = FakeDagApi(RUNNING)
    plan = load_plan(TWO_NODES)
    with _faked(Client("http://fake"), api) as client:
        client.submit_plan(plan)
        client.submit_plan(plan.model_dump(mode="json"), run_id="mine")

    assert api.bodies[0] == {"plan": plan.model_dump(mode="json", exclude_none=True)}
    assert api.bodies[1]["id"] == "mine"


def test_submit_plan_refusal_carries_each_problem() -> None:
    refusal = httpx.Response(422, json={"detail": "invalid plan: p1; p2", "problems": ["p1", "p2"]})
    with (
        _faked(Client("http://fake"), FakeDagApi(RUNNING, refusal=refusal)) as client,
        pytest.raises(ApiError) as caught,
    ):
        client.submit_plan(load_plan(TWO_NODES))

    assert (caught.value.status_code, caught.value.detail) == (422, "invalid plan: p1; p2")
    assert caught.value.problems == ["p1", "p2"]


def test_wait_dag_returns_the_final_view() -> None:
    api = FakeDagApi(RUNNING, RUNNING, RUNNING, SUCCEEDED)
    with _faked(Client("http://fake"), api) as client:
        assert client.wait_dag("run-1", poll_s=0) == SUCCEEDED
    assert api.gets == 3


def test_wait_dag_times_out_naming_the_run() -> None:
    with (
        _faked(Client("http://fake"), FakeDagApi(RUNNING)) as client,
        pytest.raises(TimeoutError, match=r"DAG run 'run-1' still running after 0\.05 s"),
    ):
        client.wait_dag("run-1", timeout=0.05, poll_s=0.01)


def test_async_client_runs_a_plan_to_the_end() -> None:
    api = FakeDagApi(RUNNING, RUNNING, SUCCEEDED)

    async def scenario() -> dict[str, Any]:
        async with AsyncClient("http://fake") as client:
            await client.close()
            client._http = httpx.AsyncClient(
                base_url="http://fake", transport=httpx.MockTransport(api)
            )
            started = await client.submit_plan(load_plan(TWO_NODES))
            assert (await client.get_dag(started["id"]))["status"] == "running"
            await client.cancel_dag(started["id"])
            return await client.wait_dag(started["id"], timeout=5, poll_s=0)

    assert asyncio.run(scenario()) == SUCCEEDED

"""Traces of calls (real API and worker processes, a real OTLP/HTTP receiver): one trace
per call from the API's request through the queue to the worker and the tool, a child of
the agent's trace when it sent a `traceparent`; GenAI attributes, and arguments and
outputs only of the tools TOOLRUN_TRACE_CONTENT names."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.otlp import ReceivedSpan, Receiver, otlp_receiver
from tests.integration.platform import Platform, apart
from tests.scripted_model import ScriptedModel, answer, tool_calls
from toolrun.permissions.levels import PermissionLevel

OWN_DATABASE = 8  # other_database offset (test_worker_metrics uses it too, never at once)
SPANS_TIMEOUT_S = 30.0
SECRET_WORDS = "lighthouse keeper"  # noqa: S105 - words in the file read, in no span


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as started:
        yield started


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as server:
        yield server


@pytest.fixture(scope="module")
def traced(
    redis_url: str,
    receiver: Receiver,
    model: ScriptedModel,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Platform]:
    """A platform (read_only and delegation workers, the scheduler) whose processes send
    their spans to `receiver`, in batches 0.1 s apart; grep's spans with its content."""
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "TOOLRUN_TRACE_CONTENT": '["grep"]',
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "TOOLRUN_MODEL_BASE_URL": model.url,
        "TOOLRUN_MODEL": "scripted",
    }
    root = tmp_path_factory.mktemp("traced")
    with apart(
        redis_url,
        OWN_DATABASE,
        root,
        levels=(PermissionLevel.READ_ONLY,),
        extra_env=env,
        scheduler=True,
        delegation=True,
    ) as up:
        (up.workspace / "notes.txt").write_text(f"the {SECRET_WORDS}\n")
        yield up


def call(platform: Platform, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A read of notes.txt, waited for."""
    response = httpx.post(
        f"{platform.base_url}/v1/calls",
        params={"wait": 30},
        json={"tool_name": "read", "arguments": {"file_path": "notes.txt"}},
        headers={**platform.headers, **(headers or {})},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    assert result["status"] == "success", result
    return result


def trace_of(receiver: Receiver, call_id: str) -> list[ReceivedSpan]:
    """Every span of the trace the call's tool span is in, once the worker's and the
    API's spans have arrived."""

    def tool_span(spans: list[ReceivedSpan]) -> ReceivedSpan | None:
        return next(
            (
                s
                for s in spans
                if s.name == "execute_tool read"
                and s.attributes.get("gen_ai.tool.call.id") == call_id
            ),
            None,
        )

    def complete(spans: list[ReceivedSpan]) -> bool:
        tool = tool_span(spans)
        if tool is None:
            return False
        kinds = {(s.service, s.kind) for s in spans if s.trace_id == tool.trace_id}
        return {("toolrun-api", "server"), ("toolrun-worker", "consumer")} <= kinds

    spans = receiver.wait_for(complete, SPANS_TIMEOUT_S, f"the spans of call {call_id}")
    tool = tool_span(spans)
    assert tool is not None
    return [s for s in spans if s.trace_id == tool.trace_id]


def one(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    named = [s for s in spans if s.name == name]
    assert len(named) == 1, (name, [s.name for s in spans])
    return named[0]


def chain_of(spans: list[ReceivedSpan], span: ReceivedSpan) -> list[str]:
    """The names of `span` and of its ancestors in `spans`, nearest first."""
    by_id = {s.span_id: s for s in spans}
    names = [span.name]
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        names.append(span.name)
    return names


def wait_for_chain(receiver: Receiver, trace_id: str, expected: list[str]) -> list[ReceivedSpan]:
    """The spans of a trace once one of them has `expected` as its names and its
    ancestors', nearest first, up to the trace's root (or the agent's span)."""

    def complete(spans: list[ReceivedSpan]) -> bool:
        mine = [s for s in spans if s.trace_id == trace_id]
        return any(chain_of(mine, s) == expected for s in mine if s.name == expected[0])

    spans = receiver.wait_for(complete, SPANS_TIMEOUT_S, f"the chain {expected}")
    return [s for s in spans if s.trace_id == trace_id]


def test_a_call_is_one_trace_under_the_agents_span(traced: Platform, receiver: Receiver) -> None:
    agent_trace, agent_span = secrets.token_hex(16), secrets.token_hex(8)
    traceparent = f"00-{agent_trace}-{agent_span}-01"

    result = call(traced, {"traceparent": traceparent})

    spans = trace_of(receiver, result["call_id"])
    assert {s.trace_id for s in spans} == {agent_trace}
    server = one(spans, "POST /v1/calls")
    admit = one(spans, "admit read")
    send = one(spans, "send tools.read_only")
    process = one(spans, "process tools.read_only")
    tool = one(spans, "execute_tool read")
    record = one(spans, "record read")
    # The chain: agent → API request → admission → queue hop → worker → tool.
    assert (server.kind, server.service, server.parent_id) == ("server", "toolrun-api", agent_span)
    assert (admit.parent_id, admit.service) == (server.span_id, "toolrun-api")
    assert (send.kind, send.parent_id) == ("producer", admit.span_id)
    assert (process.kind, process.service) == ("consumer", "toolrun-worker")
    assert process.parent_id == send.span_id  # across the queue, in the envelope
    assert tool.parent_id == process.span_id
    assert record.parent_id == process.span_id
    assert not any(s.error for s in spans)

    call_id = result["call_id"]
    for span in (admit, send, process, tool):
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == "read"
        assert span.attributes["gen_ai.tool.call.id"] == call_id
        assert span.attributes["toolrun.agent"] == result["metadata"]["agent_id"]
    assert admit.attributes["toolrun.verdict"] == "safe"
    assert admit.attributes["toolrun.level"] == "read_only"
    assert admit.attributes["toolrun.agent.name"] == "admin"
    assert tool.attributes["toolrun.level"] == "read_only"
    assert tool.attributes["toolrun.status"] == "success"
    assert process.attributes["toolrun.status"] == "success"
    assert process.attributes["toolrun.deliveries"] == 1
    assert process.attributes["toolrun.queue_wait_ms"] == result["metadata"]["queue_wait_ms"]
    assert server.attributes["http.response.status_code"] == 200
    # Names, ids and decisions only: neither the arguments nor the output.
    for span in spans:
        for value in span.attributes.values():
            assert "notes.txt" not in str(value), span
            assert SECRET_WORDS not in str(value), span


def test_a_call_without_a_traceparent_starts_its_own_trace(
    traced: Platform, receiver: Receiver
) -> None:
    result = call(traced)

    spans = trace_of(receiver, result["call_id"])
    server = one(spans, "POST /v1/calls")
    assert server.parent_id == ""  # the root
    sent, processed = one(spans, "send tools.read_only"), one(spans, "process tools.read_only")
    assert processed.parent_id == sent.span_id


def test_a_dag_run_is_one_trace_with_a_span_per_node(traced: Platform, receiver: Receiver) -> None:
    agent_trace = secrets.token_hex(16)
    read = {"tool": "read", "arguments": {"file_path": "notes.txt"}}
    plan = {"nodes": [{"id": "first", **read}, {"id": "second", **read, "depends_on": ["first"]}]}
    headers = {**traced.headers, "traceparent": f"00-{agent_trace}-{secrets.token_hex(8)}-01"}
    with httpx.Client(base_url=traced.base_url, headers=headers, timeout=60) as api:
        response = api.post("/v1/dags", json={"plan": plan})
        assert response.status_code == 201, response.text
        run_id = response.json()["id"]

    for node_id in ("first", "second"):
        chain = [
            "execute_tool read",
            "process tools.read_only",
            "send tools.read_only",
            "admit read",
            f"dag node {node_id}",
            "POST /v1/dags",
        ]
        spans = wait_for_chain(receiver, agent_trace, chain)
        node = one(spans, f"dag node {node_id}")
        assert node.service == "toolrun-scheduler"
        assert node.attributes["toolrun.dag.run_id"] == run_id
        assert node.attributes["toolrun.dag.node_id"] == node_id
        call_id = node.attributes["gen_ai.tool.call.id"]
        called = [s for s in spans if s.attributes.get("gen_ai.tool.call.id") == call_id]
        assert {s.name for s in called} >= {"admit read", "process tools.read_only"}


def test_a_sub_agents_calls_are_children_of_its_task_call(
    traced: Platform, receiver: Receiver, model: ScriptedModel
) -> None:
    definition = {
        "name": "reader",
        "description": "Reads notes.",
        "prompt": "You read files.",
        "tools": ["read"],
        "ceiling": "read_only",
    }
    with httpx.Client(base_url=traced.base_url, headers=traced.headers, timeout=60) as api:
        assert api.put("/v1/subagents/reader", json=definition).status_code == 201
    model.script(tool_calls(("read", {"file_path": "notes.txt"})), answer("Read it."))
    agent_trace = secrets.token_hex(16)
    response = httpx.post(
        f"{traced.base_url}/v1/calls",
        params={"wait": 60},
        json={"tool_name": "task", "arguments": {"agent": "reader", "prompt": "Read notes."}},
        headers={**traced.headers, "traceparent": f"00-{agent_trace}-{secrets.token_hex(8)}-01"},
        timeout=90,
    )
    assert response.json()["status"] == "success", response.text

    wait_for_chain(
        receiver,
        agent_trace,
        [
            "execute_tool read",
            "process tools.read_only",
            "send tools.read_only",
            "admit read",
            "execute_tool task",  # on the delegation worker
            "process tools.delegation",
            "send tools.delegation",
            "admit task",
            "POST /v1/calls",
        ],
    )


def test_a_tools_process_start_is_a_span_of_its_call(traced: Platform, receiver: Receiver) -> None:
    agent_trace = secrets.token_hex(16)
    response = httpx.post(
        f"{traced.base_url}/v1/calls",
        params={"wait": 30},
        json={"tool_name": "grep", "arguments": {"pattern": "keeper"}},
        headers={**traced.headers, "traceparent": f"00-{agent_trace}-{secrets.token_hex(8)}-01"},
        timeout=60,
    )
    assert response.json()["status"] == "success", response.text

    chain = [
        "start rg",
        "execute_tool grep",
        "process tools.read_only",
        "send tools.read_only",
        "admit grep",
        "POST /v1/calls",
    ]
    spans = wait_for_chain(receiver, agent_trace, chain)
    start = one(spans, "start rg")
    assert start.attributes == {"process.executable.name": "rg"}  # not its arguments
    # grep is named in TOOLRUN_TRACE_CONTENT: its tool span, and only that, has its content.
    tool = one(spans, "execute_tool grep")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"])["pattern"] == "keeper"
    assert "notes.txt" in tool.attributes["gen_ai.tool.call.result"]
    for span in spans:
        if span is not tool:
            assert "gen_ai.tool.call.arguments" not in span.attributes, span
            assert "gen_ai.tool.call.result" not in span.attributes, span


def call_ids_of(span: ReceivedSpan) -> list[str]:
    """The call ids a `write history` span names (an OTLP array of strings)."""
    found = span.attributes.get("toolrun.history.call_ids")
    return [] if found is None else [value.string_value for value in found.values]


def test_the_history_drainer_traces_each_batch_it_writes(
    traced: Platform, receiver: Receiver
) -> None:
    call_id = call(traced)["call_id"]

    def written(spans: list[ReceivedSpan]) -> bool:
        return any(s.name == "write history" and call_id in call_ids_of(s) for s in spans)

    spans = receiver.wait_for(written, SPANS_TIMEOUT_S, f"the history write of {call_id}")
    [batch] = [s for s in spans if s.name == "write history" and call_id in call_ids_of(s)]
    assert (batch.service, batch.kind) == ("toolrun-worker", "internal")
    assert batch.attributes["toolrun.history.rows"] >= 1
    assert len(call_ids_of(batch)) <= batch.attributes["toolrun.history.rows"]
    assert not batch.error

"""Traces are off, and cost nothing, unless OpenTelemetry's variables ask for them: the
SDK's tracing and the exporter are not even imported. (OpenTelemetry's API is: FastAPI,
mcp and redis-py import it, and redis-py the SDK's metrics too when it is installed.
On, traces are tested end to end in tests/integration/test_traces.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.conftest import agent_token
from toolrun.config import Settings
from toolrun.monitoring import tracing

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("environment", "exporters"),
    [
        ({}, ()),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, ("otlp",)),
        ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
        ({"OTEL_TRACES_EXPORTER": "otlp, Console"}, ("otlp", "console")),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ()),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ()),
    ],
)
def test_the_otel_variables_decide_whether_there_are_traces(
    no_otel: None,
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    exporters: tuple[str, ...],
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    assert Settings().trace_exporters == exporters


def test_the_protocol_is_http_unless_grpc_is_asked_for(
    no_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings().otlp_protocol == "http/protobuf"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert Settings().otlp_protocol == "grpc"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    assert Settings().otlp_protocol == "http/protobuf"


def test_no_tools_content_is_traced_unless_an_operator_names_the_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOOLRUN_TRACE_CONTENT", raising=False)
    assert Settings().trace_content == []
    monkeypatch.setenv("TOOLRUN_TRACE_CONTENT", '["read", "grep"]')
    assert Settings().trace_content == ["read", "grep"]
    for wrong in ('["read,grep"]', '[""]', '[" read"]'):
        monkeypatch.setenv("TOOLRUN_TRACE_CONTENT", wrong)
        with pytest.raises(ValidationError, match="is not one tool name"):
            Settings()


def test_off_a_span_is_nothing_and_the_envelope_carries_no_context() -> None:
    assert not tracing.enabled()
    with tracing.span("admit read", attributes={"gen_ai.tool.name": "read"}) as span:
        assert span is None
        assert tracing.carrier() == {}
    tracing.annotate(span, {"toolrun.status": "success"}, error="error")  # nothing to do


# In a fresh interpreter: the API app's admission of a call (sent to a real Redis, which
# is the broker too) and a worker running one, with no OTEL_* variable set.
CALL_PATHS = """
import json, sys
from fastapi.testclient import TestClient
from tests.envelopes import envelope
from toolrun.api.app import create_app_from_environment
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.runtime import WorkerRuntime

headers = {"Authorization": "Bearer " + sys.argv[1]}
with TestClient(create_app_from_environment(), headers=headers) as client:
    sent = client.post("/v1/calls", json={"tool_name": "read", "arguments": {"file_path": "a"}})
runtime = WorkerRuntime(Settings(), PermissionLevel.READ_ONLY, ToolRegistry.with_builtins())
ran = runtime.run(envelope(ToolCall(tool_name="read", arguments={"file_path": "a.txt"})))
from opentelemetry import trace
print(json.dumps({
    "sent": sent.status_code,
    "ran": ran.status.value,
    "provider": type(trace.get_tracer_provider()).__name__,
    "sdk": sorted(m for m in sys.modules if m.startswith(("opentelemetry.sdk.trace",
        "opentelemetry.exporter", "opentelemetry.proto"))),
}))
"""


def test_off_the_sdk_is_not_imported_on_the_call_paths(
    redis_url: str, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    settings = Settings(workspace=workspace, home=tmp_path / "home", redis_url=redis_url)
    token = agent_token(settings)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "TOOLRUN_WORKSPACE": str(workspace),
        "TOOLRUN_HOME": str(tmp_path / "home"),
        "TOOLRUN_REDIS_URL": redis_url,
        "TOOLRUN_NETWORK_ISOLATION": "off",
    }

    done = subprocess.run(
        [sys.executable, "-c", CALL_PATHS, token],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"sent": 202, "ran": "success", "provider": "ProxyTracerProvider", "sdk": []}


# In a fresh interpreter with traces on (spans to the console): the context carried in an
# envelope, under a request whose baggage an agent filled.
CARRIED = """
import json
from opentelemetry import baggage, context
from toolrun.config import Settings
from toolrun.monitoring import tracing

tracing.setup(Settings(), "toolrun-test")
token = context.attach(baggage.set_baggage("user.secret", "x" * 4000))
with tracing.span("admit read") as span:
    carried = tracing.carrier()
context.detach(token)
with tracing.span("process tools.read_only", parent=carried) as child:
    same = child.get_span_context().trace_id == span.get_span_context().trace_id
print("CARRIED " + json.dumps({"keys": sorted(carried), "same_trace": same}))
"""


def test_the_carried_context_is_the_trace_alone_not_the_agents_baggage(
    no_otel: None, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CARRIED],
        cwd=ROOT,
        env={**os.environ, "OTEL_TRACES_EXPORTER": "console", "TOOLRUN_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("CARRIED ")]
    found = json.loads(line.removeprefix("CARRIED "))
    assert found == {"keys": ["traceparent"], "same_trace": True}

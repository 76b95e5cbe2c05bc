"""A worker's tool span carries a call's arguments and output only for the tools an
operator names (TOOLRUN_TRACE_CONTENT), secret arguments redacted as in the history and
the output cut at 4 KiB; the other tools' spans carry neither (real Redis, traces on in
a fresh interpreter: a process sets its tracer provider once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolrun.calls.traced import MAX_CONTENT_BYTES
from toolrun.history.records import REDACTED

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cr3t-t0ken"  # noqa: S105 - a secret argument's value, in no span
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"

# Spans to the console and, for the test, to memory; a `login` tool with a secret
# argument that it echoes in a long output, and a built-in `read`.
RUN_TWO_CALLS = """
import json
from typing import Any
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.envelopes import envelope
from toolrun.config import Settings
from toolrun.monitoring import tracing
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import Tool, ToolCall, ToolContext, ToolDescriptor, ToolExample, ToolOutput
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.runtime import WorkerRuntime


class Login(Tool):
    starts_processes = False
    descriptor = ToolDescriptor(
        name="login",
        version="1.0.0",
        description="Greets a user, echoing the token it was given.",
        parameters={
            "type": "object",
            "properties": {
                "user": {"type": "string"},
                "token": {"type": "string", "writeOnly": True},
            },
            "required": ["user", "token"],
            "additionalProperties": False,
        },
        returns={"type": "object"},
        examples=[
            ToolExample(description=str(i), arguments={"user": "u", "token": "t"})
            for i in range(3)
        ],
        permission=PermissionLevel.READ_ONLY,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        user, token = arguments["user"], arguments["token"]
        return ToolOutput({"greeting": f"hello {user}", "echo": token, "log": "é" * 5000})


settings = Settings()
assert tracing.setup(settings, "toolrun-test")
memory = InMemorySpanExporter()
trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(memory))
registry = ToolRegistry.with_builtins()
registry.register(Login())
runtime = WorkerRuntime(settings, PermissionLevel.READ_ONLY, registry)
login = ToolCall(tool_name="login", version="1.0.0", arguments={"user": "ada", "token": TOKEN})
read = ToolCall(tool_name="read", arguments={"file_path": "a.txt"})
statuses = [runtime.run(envelope(call)).status.value for call in (login, read)]
spans = {s.name: dict(s.attributes) for s in memory.get_finished_spans()}
tracing.shutdown()
print("FOUND " + json.dumps({"statuses": statuses, "spans": spans}))
"""


def run_calls(redis_url: str, workspace: Path, home: Path) -> dict[str, Any]:
    """The statuses of a `login` and a `read` call run by a worker runtime with traces on
    and TOOLRUN_TRACE_CONTENT naming `login`, and the attributes of every span by name."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLRUN_"))},
        "OTEL_TRACES_EXPORTER": "console",
        "TOOLRUN_TRACE_CONTENT": '["login"]',
        "TOOLRUN_WORKSPACE": str(workspace),
        "TOOLRUN_HOME": str(home),
        "TOOLRUN_REDIS_URL": redis_url,
        "TOOLRUN_NETWORK_ISOLATION": "off",
    }
    done = subprocess.run(
        [sys.executable, "-c", f"TOKEN = {TOKEN!r}\n{RUN_TWO_CALLS}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("FOUND ")]
    found: dict[str, Any] = json.loads(line.removeprefix("FOUND "))
    return found


def test_only_the_named_tools_spans_carry_arguments_and_output_secrets_redacted(
    redis_url: str, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("the lighthouse keeper\n")

    found = run_calls(redis_url, workspace, tmp_path / "home")

    assert found["statuses"] == ["success", "success"]
    spans = found["spans"]
    read = spans["execute_tool read"]
    assert ARGUMENTS not in read
    assert RESULT not in read
    login = spans["execute_tool login"]
    assert json.loads(login[ARGUMENTS]) == {"user": "ada", "token": REDACTED}
    result = login[RESULT]
    assert result.startswith(f'{{"greeting": "hello ada", "echo": "{REDACTED}", "log": "éé')
    assert result.endswith("…")
    assert len(result.encode()) <= MAX_CONTENT_BYTES
    # The secret in no span at all, nor any call's content outside its tool span.
    for name, attributes in spans.items():
        assert TOKEN not in json.dumps(attributes), name
        if name != "execute_tool login":
            assert ARGUMENTS not in attributes, name
            assert RESULT not in attributes, name

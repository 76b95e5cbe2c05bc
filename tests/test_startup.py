"""What starting up loads: `import toolrun.client`, `toolrun --help`, `toolrun call
--local` and the commands that talk to the API, each in a fresh interpreter. Module
presence is checked, never wall time (bench/startup.py measures that)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# The platform's services and their drivers: neither the SDK nor the CLI's start needs them.
PLATFORM = (
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "celery",
    "kombu",
    "redis",
    "mcp",
)
# What single tools need (search, terminal, bash's parser): loaded by their own calls.
TOOL_PARTS = ("tantivy", "tree_sitter", "pexpect", "pyte", "bashlex")
MODULES = "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
COMMAND = """
import sys
from toolrun.cli import main
sys.argv = ["toolrun", *{args!r}]
try:
    main()
except SystemExit:
    pass
"""


def loaded_by(code: str, cwd: Path, settings: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (TOOLRUN_* unset but
    for `settings`)."""
    return run_loading(code, cwd, settings)[1]


def run_loading(
    code: str, cwd: Path, settings: dict[str, str] | None = None
) -> tuple[str, set[str]]:
    """What `code` printed, and the modules it left loaded (as `loaded_by`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env.update(settings or {})
    completed = subprocess.run(
        [sys.executable, "-c", code + MODULES],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        timeout=60,
        check=True,
    )
    *printed, modules = completed.stdout.splitlines()
    return "\n".join(printed), set(json.loads(modules))


def packages(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def test_the_sdk_imports_neither_the_platform_nor_its_own_http_and_models(
    tmp_path: Path,
) -> None:
    loaded = packages(loaded_by("import toolrun.client", tmp_path))

    assert loaded.isdisjoint(PLATFORM + TOOL_PARTS)
    # httpx and the pydantic models come with the first client and the first result.
    assert loaded.isdisjoint({"httpx", "pydantic", "jsonschema", "asyncio"})


def test_help_imports_no_group_module_settings_or_registry(tmp_path: Path) -> None:
    loaded = loaded_by(COMMAND.format(args=["--help"]), tmp_path)

    assert packages(loaded).isdisjoint(PLATFORM + TOOL_PARTS + ("pydantic",))
    assert "toolrun.config" not in loaded
    assert "toolrun.cli.mcp" not in loaded
    assert "toolrun.cli.agents" not in loaded
    assert "toolrun.tools.registry" not in loaded


def test_a_local_read_loads_the_tools_but_not_what_other_tools_need(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    args = ["call", "read", "--local", "--args", '{"file_path": "a.txt"}']

    loaded = loaded_by(COMMAND.format(args=args), workspace)

    assert "toolrun.tools.builtin.read" in loaded
    # The Task tool's descriptor names the sub-agents' folder without their YAML parser.
    assert packages(loaded).isdisjoint(PLATFORM + TOOL_PARTS + ("httpx", "yaml"))
    # Sub-agents run through the platform's call lifecycle: only a Task call imports it.
    assert "toolrun.subagents.delegation" not in loaded


def test_permission_levels_come_without_the_approval_prompts(tmp_path: Path) -> None:
    loaded = loaded_by("import toolrun.permissions.levels", tmp_path)

    assert "toolrun.permissions.approvals" not in loaded
    assert "rich" not in packages(loaded)


# What a command that only talks to the API needs neither for its settings nor for its
# requests: httpx's own command line (click, pygments).
API_COMMAND_SPARES = ("click", "pygments")
CALL_ID = "3f2a9c01aa0042b0a1b2c3d4e5f60718"
_RESULT = {
    "call_id": CALL_ID,
    "tool_name": "read",
    "tool_version": "1.0.0",
    "status": "success",
    "output": {"content": "hello"},
    "error": None,
    "metadata": {"queued_at": 1.0, "execution_time_ms": 2.5, "agent_id": "a1"},
}
_ANSWERS: dict[str, Any] = {
    "/v1/agents": [
        {"name": "bot", "role": "agent", "ceiling": "read_only", "tools": None, "pins": []}
    ],
    f"/v1/calls/{CALL_ID}": _RESULT,
    "/v1/calls": [_RESULT | {"status": "running", "agent_name": "bot"}],
    "/v1/approvals": [
        {
            "call_id": CALL_ID,
            "status": "pending",
            "risk": "high",
            "policy": "dangerous",
            "tool_name": "bash",
            "agent_name": "bot",
            "warning": "deletes files",
        }
    ],
    "/v1/history": {
        "rows": [
            {
                "call_id": CALL_ID,
                "queued_at": 1.0,
                "execution_time_ms": 2.5,
                "status": "success",
                "tool_name": "read",
                "tool_version": "1.0.0",
                "agent_name": "bot",
                "agent_id": "a1",
                "error": None,
            }
        ],
        "next_cursor": None,
    },
}


class _CannedApi(BaseHTTPRequestHandler):
    """The API's answers to the listing commands, as the real API shapes them."""

    def do_GET(self) -> None:
        answer = _ANSWERS.get(self.path.partition("?")[0])
        body = json.dumps(answer if answer is not None else {"detail": "not here"}).encode()
        self.send_response(200 if answer is not None else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def canned_api() -> Iterator[dict[str, str]]:
    """The settings of a command talking to a canned API on a free port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CannedApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"TOOLRUN_API": f"http://127.0.0.1:{server.server_port}", "TOOLRUN_TOKEN": "t"}
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        pytest.param([*command.split(), *extra], shown, id=command)
        for command, extra, shown in [
            ("agents list", [], "bot"),
            ("approvals list", [], CALL_ID),
            ("history", ["--limit", "3"], CALL_ID),
            ("calls list", [], CALL_ID),
            ("calls show", [CALL_ID], "hello"),
        ]
    ],
)
def test_a_command_that_talks_to_the_api_reads_its_settings_without_the_settings_model(
    args: list[str], shown: str, canned_api: dict[str, str], tmp_path: Path
) -> None:
    printed, loaded = run_loading(COMMAND.format(args=args), tmp_path, canned_api)

    assert shown in printed  # it did get the answer, and show it
    assert "httpx" in packages(loaded)
    assert packages(loaded).isdisjoint(PLATFORM + TOOL_PARTS + API_COMMAND_SPARES)
    assert "toolrun.config" not in loaded
    if args[:2] != ["calls", "show"]:  # a ToolResult needs the tool model; dicts do not
        assert packages(loaded).isdisjoint({"pydantic", "jsonschema"})

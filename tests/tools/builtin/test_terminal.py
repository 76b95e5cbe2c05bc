"""The terminal tool through a real terminal host process and real programs on ptys."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CallTool

from toolrun.config import Settings
from toolrun.errors import ToolExecutionError
from toolrun.permissions.approvals import AutoApprover
from toolrun.terminal.client import HostClient
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, ToolStatus
from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket

SHORT_HOME = Path("/tmp")  # a unix socket path must stay short


@pytest.fixture
def settings(workspace: Path, tmp_path: Path) -> Iterator[Settings]:
    home = Path(f"/tmp/trt-{os.getpid()}-{tmp_path.name[-12:]}")
    yield Settings(workspace=workspace, home=home, command_allowlist=["default", "python3"])
    answer = _host_pid(Settings(workspace=workspace, home=home))
    if answer is not None:
        os.kill(answer, signal.SIGTERM)


def _host_pid(settings: Settings) -> int | None:
    client = HostClient(host_socket(settings), idle_s=HOST_IDLE_S)
    try:
        return int(client._exchange({"op": "ping"}, 1.0)["pid"])
    except OSError:
        return None


def ok(result: ToolResult) -> dict[str, Any]:
    assert result.status is ToolStatus.SUCCESS, result.error
    output: dict[str, Any] = result.output
    return output


def test_a_python_repl_step_by_step(call_tool: CallTool) -> None:
    session = ok(call_tool("terminal", operation="open", command="python3 -q"))["session"]
    assert ok(call_tool("terminal", operation="wait_for", session=session, pattern="^>>> "))[
        "matched"
    ]

    ok(call_tool("terminal", operation="send", session=session, text="1+1", keys=["enter"]))
    answer = ok(call_tool("terminal", operation="wait_for", session=session, pattern=r"^2$"))
    assert answer["matched"]
    assert "1+1\n2\n" in answer["output"]

    screen = ok(call_tool("terminal", operation="read", session=session, screen=True))["screen"]
    assert screen[-3:] == [">>> 1+1", "2", ">>>"]
    closed = ok(call_tool("terminal", operation="close", session=session))
    assert closed["exit_code"] is not None


def test_ctrl_c_stops_a_running_command(call_tool: CallTool) -> None:
    session = ok(call_tool("terminal", operation="open", command="python3 -q"))["session"]
    call_tool("terminal", operation="wait_for", session=session, pattern="^>>> ")
    ok(
        call_tool(
            "terminal", operation="send", session=session, text="import time; time.sleep(60)\r"
        )
    )
    still = ok(
        call_tool("terminal", operation="wait_for", session=session, pattern="never", timeout=0.5)
    )
    assert still["matched"] is False
    assert still["alive"] is True

    ok(call_tool("terminal", operation="send", session=session, keys=["ctrl-c"]))

    stopped = ok(
        call_tool("terminal", operation="wait_for", session=session, pattern="KeyboardInterrupt")
    )
    assert stopped["matched"]


def test_a_program_that_ends_reports_its_exit_code(call_tool: CallTool) -> None:
    session = ok(call_tool("terminal", operation="open", command="sh -c 'echo bye; exit 3'"))[
        "session"
    ]

    ended = ok(
        call_tool("terminal", operation="wait_for", session=session, pattern="never", timeout=2)
    )

    assert "bye" in ended["output"]
    assert (ended["alive"], ended["exit_code"]) == (False, 3)


def test_resize_changes_the_screen(call_tool: CallTool) -> None:
    session = ok(call_tool("terminal", operation="open", command="python3 -q", cols=40, rows=10))[
        "session"
    ]
    call_tool("terminal", operation="wait_for", session=session, pattern="^>>> ")
    call_tool(
        "terminal",
        operation="send",
        session=session,
        text="import shutil; shutil.get_terminal_size()\r",
    )
    assert (
        "columns=40"
        in ok(call_tool("terminal", operation="wait_for", session=session, pattern=r"columns=\d+"))[
            "output"
        ]
    )

    ok(call_tool("terminal", operation="resize", session=session, cols=100, rows=30))
    call_tool("terminal", operation="send", session=session, text="shutil.get_terminal_size()\r")

    assert (
        "columns=100"
        in ok(call_tool("terminal", operation="wait_for", session=session, pattern=r"columns=100"))[
            "output"
        ]
    )


def test_closed_unknown_and_lost_sessions(call_tool: CallTool, settings: Settings) -> None:
    session = ok(call_tool("terminal", operation="open", command="python3 -q"))["session"]
    ok(call_tool("terminal", operation="close", session=session))

    closed = call_tool("terminal", operation="read", session=session)
    unknown_id = f"{settings.machine_id}-0123456789abcdef"
    unknown = call_tool("terminal", operation="read", session=unknown_id)
    elsewhere = call_tool("terminal", operation="read", session="othermachine-0123456789abcdef")
    assert closed.error == f"terminal session {session} is lost: it was closed; open a new one"
    assert unknown.error is not None
    assert "is lost: its host restarted" in unknown.error
    assert elsewhere.error == (
        "terminal session othermachine-0123456789abcdef is lost: it is held by machine "
        "othermachine, not this one; open a new one"
    )
    assert session.startswith(f"{settings.machine_id}-")

    again = ok(call_tool("terminal", operation="open", command="python3 -q"))["session"]
    pid = _host_pid(settings)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # the machine's host dies with its sessions
    lost = call_tool("terminal", operation="read", session=again)
    assert lost.status is ToolStatus.ERROR
    assert lost.error is not None
    assert f"terminal session {again} is lost" in lost.error


def test_idle_sessions_expire(workspace: Path, tmp_path: Path) -> None:
    from toolrun.terminal.host import Host  # noqa: PLC0415

    host = Host(idle_s=0.2)
    opened = host.handle(
        {
            "op": "open",
            "machine": "m1",
            "argv": ["/bin/cat"],
            "cwd": str(workspace),
            "env": {"PATH": "/usr/bin:/bin"},
            "cols": 80,
            "rows": 24,
        }
    )
    host.sessions[opened["session"]][1].last_used -= 1

    assert host.sweep() is True  # it had a session a moment ago
    with pytest.raises(Exception, match="expired"):
        host.handle({"op": "read", "session": opened["session"]})


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        ({"command": "nc -l 9999"}, ToolStatus.BLOCKED, "command not in allowlist: nc"),
        (
            {"command": "python3 -q", "env": {"LD_PRELOAD": "/x.so"}},
            ToolStatus.BLOCKED,
            "LD_PRELOAD",
        ),
        ({"command": "python3 -q", "env": {"PATH": "/tmp"}}, ToolStatus.BLOCKED, "PATH"),
    ],
)
def test_open_is_held_to_the_bash_rules(
    call_tool: CallTool, arguments: dict[str, Any], status: ToolStatus, message: str
) -> None:
    result = call_tool("terminal", operation="open", **arguments)

    assert result.status is status
    assert result.error is not None
    assert message in result.error


def test_open_always_needs_confirmation(registry: Any, ctx: Any) -> None:
    tool = registry.get("terminal")

    verdict = tool.verdict({"operation": "open", "command": "python3 -q"}, ctx)
    reading = tool.verdict({"operation": "read", "session": "0123456789abcdef"}, ctx)

    assert verdict.needs_approval
    assert not reading.needs_approval


def test_a_session_belongs_to_the_agent_that_opened_it(
    registry: ToolRegistry, settings: Settings
) -> None:
    executor = Executor(registry)

    def as_agent(agent_id: str, **arguments: Any) -> ToolResult:
        ctx = ToolContext.create(settings, approver=AutoApprover(), agent_id=agent_id)
        return executor.execute(ToolCall(tool_name="terminal", arguments=arguments), ctx)

    session = ok(as_agent("alice", operation="open", command="python3 -q"))["session"]

    stolen = as_agent("mallory", operation="send", session=session, text="import os\r")
    assert stolen.status is ToolStatus.ERROR
    assert stolen.error is not None
    assert f"terminal session {session} is lost" in stolen.error
    assert ok(as_agent("alice", operation="read", session=session))["alive"] is True


def test_stopping_the_host_ends_its_sessions_and_a_new_open_starts_a_new_host(
    call_tool: CallTool, settings: Settings
) -> None:
    session = ok(call_tool("terminal", operation="open", command="python3 -q"))["session"]
    first = _host_pid(settings)
    client = HostClient(host_socket(settings), idle_s=HOST_IDLE_S)

    assert client.stop() is True
    assert _host_pid(settings) is None
    assert client.stop() is False
    lost = call_tool("terminal", operation="read", session=session)
    assert lost.status is ToolStatus.ERROR
    assert f"terminal session {session} is lost" in (lost.error or "")
    # The stopped host must not take the new host's socket with it.
    ok(call_tool("terminal", operation="open", command="python3 -q"))
    second = _host_pid(settings)
    assert second is not None
    assert second != first


def test_a_home_too_deep_for_a_socket_path_uses_a_private_temporary_directory(
    workspace: Path,
) -> None:
    deep = Path("/tmp") / ("d" * 60) / ("e" * 60)

    path = host_socket(Settings(workspace=workspace, home=deep))

    assert len(os.fsencode(path)) <= 107
    assert path.parent.name == f"toolrun-{os.getuid()}"
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path == host_socket(Settings(workspace=workspace, home=deep))
    assert path != host_socket(Settings(workspace=workspace, home=deep / "other"))


def test_a_shared_temporary_directory_is_refused(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    (tmp_path / f"toolrun-{os.getuid()}").mkdir(mode=0o777)
    os.chmod(tmp_path / f"toolrun-{os.getuid()}", 0o777)  # noqa: S103 - the attack
    tempfile.tempdir = None  # read TMPDIR again
    try:
        with pytest.raises(ToolExecutionError, match="not a private directory"):
            host_socket(Settings(workspace=workspace, home=tmp_path / ("x" * 120)))
    finally:
        tempfile.tempdir = None


@pytest.mark.parametrize(
    ("arguments", "missing"),
    [
        ({"operation": "open"}, "command"),
        ({"operation": "send", "text": "1+1"}, "session"),
        ({"operation": "read"}, "session"),
        ({"operation": "wait_for", "session": "m1-0123456789abcdef"}, "pattern"),
        ({"operation": "close"}, "session"),
    ],
)
def test_what_an_operation_needs_is_checked_before_it_runs(
    call_tool: CallTool, arguments: dict[str, Any], missing: str
) -> None:
    """The schema says what each operation needs, so a call without it is refused with
    the parameter named before it runs (the API answers 422), not by the terminal host."""
    result = call_tool("terminal", **arguments)

    assert result.status is ToolStatus.ERROR
    assert result.error == f"invalid arguments: missing required parameter: {missing}"

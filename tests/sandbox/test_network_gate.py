"""The jail a call gets from the settings: namespaces on, the platform's state hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import Settings
from toolrun.permissions.approvals import AutoApprover
from toolrun.sandbox.network import NetworkJail, isolation_problem
from toolrun.sandbox.network_gate import call_network, network_problem
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason="no namespaces here")


def bash(settings: Settings, command: str) -> ToolResult:
    with call_network(settings, lambda refusal: None) as jail:
        assert isinstance(jail, NetworkJail)
        # Authorised even when dangerous: what stops these commands must be the jail.
        ctx = ToolContext.create(settings, network=jail, approver=AutoApprover(dangerous=True))
        call = ToolCall(tool_name="bash", arguments={"command": command})
        return Executor(ToolRegistry.with_builtins()).execute(call, ctx)


@pytest.fixture
def settings(workspace: Path, tmp_path: Path) -> Settings:
    home = tmp_path / "state"
    home.mkdir()
    (home / "admin.token").write_text("trk_secret\n")
    return Settings(workspace=workspace, home=home, command_allowlist=["default", "cat"])


def test_bash_cannot_read_the_platforms_state(settings: Settings) -> None:
    home = settings.platform_home

    read = bash(settings, f"cat {home}/admin.token")
    listed = bash(settings, f"ls -A {home}")
    written = bash(settings, f"touch {home}/planted")

    assert read.status == "error"
    assert "No such file or directory" in read.output["stderr"]
    assert listed.output["stdout"] == ""
    assert written.status == "error"
    assert not (home / "planted").exists()
    assert (home / "admin.token").read_text() == "trk_secret\n"  # hidden, not harmed


def test_the_workspace_stays_writable(settings: Settings, workspace: Path) -> None:
    result = bash(settings, "echo hi > made.txt && cat made.txt")

    assert result.output["stdout"] == "hi"
    assert (workspace / "made.txt").read_text() == "hi\n"


def test_isolation_off_is_reported(workspace: Path) -> None:
    settings = Settings(workspace=workspace, network_isolation="off")

    assert network_problem(settings) == "turned off (TOOLRUN_NETWORK_ISOLATION=off)"
    with call_network(settings, lambda refusal: None) as jail:
        assert jail is None


def test_the_default_home_is_outside_the_workspace(workspace: Path) -> None:
    settings = Settings(workspace=workspace)

    assert not settings.platform_home.is_relative_to(workspace)
    assert settings.home_problem() is None
    assert settings.platform_home == Settings(workspace=workspace).platform_home  # stable


@pytest.mark.parametrize("inside", [".toolrun", ".", "a/b"])
def test_a_home_inside_the_workspace_is_a_problem(workspace: Path, inside: str) -> None:
    settings = Settings(workspace=workspace, home=workspace / inside)

    problem = settings.home_problem()

    assert problem is not None
    assert "is inside the workspace" in problem

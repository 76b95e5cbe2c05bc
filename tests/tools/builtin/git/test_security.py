"""Attacks on the git tools: option injection, escapes, and repositories that try to run
commands of their own."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CallTool
from tests.tools.builtin.git.conftest import run_git

from toolrun.config import Settings
from toolrun.permissions.approvals import Approver, AutoApprover
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolStatus

Git = Any


@pytest.fixture
def approver() -> Approver:
    """An operator who approves even the dangerous calls: the checks must hold anyway."""
    return AutoApprover(dangerous=True)


INJECTION = "--upload-pack=touch pwned"


def script(path: Path, marker: Path) -> str:
    """An executable that leaves `marker` behind if anything runs it."""
    path.write_text(f"#!/bin/sh\ntouch {marker}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("git_log", {"revision": INJECTION}),
        ("git_diff", {"from": INJECTION}),
        ("git_show", {"revision": INJECTION}),
        ("git_blame", {"path": "app.py", "revision": INJECTION}),
        ("git_branch_create", {"name": INJECTION}),
        ("git_switch", {"branch": INJECTION}),
        ("git_reset", {"revision": INJECTION}),
        ("git_push", {"branch": INJECTION}),
    ],
)
def test_a_ref_that_looks_like_an_option_is_refused(
    call_tool: CallTool, history: Path, tool: str, arguments: dict[str, Any]
) -> None:
    result = call_tool(tool, **arguments)

    assert result.status is ToolStatus.BLOCKED
    assert result.error is not None
    assert "starts with '-': it would be read as an option" in result.error
    assert not (history / "pwned").exists()


def test_paths_and_messages_that_look_like_options_stay_literal(
    call_tool: CallTool, history: Path, git: Git
) -> None:
    (history / "untracked.txt").write_text("x\n")

    added = call_tool("git_add", paths=["--all"])
    assert added.status is ToolStatus.ERROR  # no file named --all; nothing staged
    assert git("diff", "--cached", "--name-only") == ""

    (history / "--all").write_text("a file with an odd name\n")
    assert call_tool("git_add", paths=["--all"]).status is ToolStatus.SUCCESS
    made = call_tool("git_commit", message="--amend")
    assert made.status is ToolStatus.SUCCESS
    assert git("log", "--format=%s").split("\n")[:3] == ["--amend", "Return two", "Add the app"]
    assert git("status", "--porcelain", "--untracked-files=all") == "?? untracked.txt\n"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/passwd", "link/secret.txt"])
def test_paths_outside_the_workspace_are_refused(
    call_tool: CallTool, history: Path, path: str
) -> None:
    (history / "link").symlink_to(history.parent / "outside")

    for tool, arguments in (("git_blame", {"path": path}), ("git_diff", {"paths": [path]})):
        result = call_tool(tool, **arguments)
        assert result.status is ToolStatus.BLOCKED, (tool, result.error)


def test_hooks_fsmonitor_and_external_diff_of_the_repository_never_run(
    call_tool: CallTool, history: Path, git: Git, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    hooks = history / ".git" / "hooks"
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-checkout"):
        script(hooks / hook, marker)
    git("config", "core.fsmonitor", script(tmp_path / "fsmonitor", marker))
    git("config", "diff.external", script(tmp_path / "extdiff", marker))
    git("config", "core.pager", script(tmp_path / "pager", marker))
    (history / "app.py").write_text("changed\n")

    for tool, arguments in [
        ("git_status", {}),
        ("git_diff", {}),
        ("git_show", {}),
        ("git_log", {}),
        ("git_commit", {"message": "hooks?", "all": True}),
        ("git_branch_create", {"name": "b", "switch": True}),
    ]:
        result = call_tool(tool, **arguments)
        assert result.status is ToolStatus.SUCCESS, (tool, result.error)

    assert not marker.exists()


@pytest.mark.parametrize(
    ("key", "attributes"),
    [
        ("filter.evil.clean", "*.py filter=evil\n"),
        ("diff.evil.textconv", "*.py diff=evil\n"),
        ("core.sshCommand", ""),
    ],
)
def test_a_repository_whose_config_runs_commands_is_refused(
    call_tool: CallTool, history: Path, git: Git, tmp_path: Path, key: str, attributes: str
) -> None:
    marker = tmp_path / "ran"
    git("config", key, script(tmp_path / "evil", marker))
    (history / ".gitattributes").write_text(attributes)
    (history / "app.py").write_text("changed\n")

    result = call_tool("git_status")

    assert result.status is ToolStatus.ERROR
    assert result.error is not None
    assert f"the repository's config runs commands of its own ({key.lower()})" in result.error
    assert not marker.exists()


def test_a_git_directory_outside_the_workspace_is_refused(
    call_tool: CallTool, workspace: Path
) -> None:
    elsewhere = workspace.parent / "outside" / "real"
    run_git(workspace.parent / "outside", "init", "-q", str(elsewhere))
    (workspace / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")

    result = call_tool("git_status")

    assert result.status is ToolStatus.BLOCKED
    assert result.error is not None
    assert "git directory is outside the workspace" in result.error


def test_a_repository_above_the_workspace_is_not_used(call_tool: CallTool, workspace: Path) -> None:
    run_git(workspace.parent, "init", "-q")  # the workspace is inside someone's repository

    result = call_tool("git_status")

    assert result.status is ToolStatus.ERROR
    assert result.error == "not a git repository: . (run git init first)"


def test_the_admin_tools_wait_for_an_explicit_approval(
    registry: ToolRegistry, settings: Settings, history: Path
) -> None:
    """An approver that confirms calls, but does not authorise dangerous ones."""
    (history / "scratch.txt").write_text("keep me\n")
    ctx = ToolContext.create(settings, approver=AutoApprover())

    result = Executor(registry).execute(ToolCall(tool_name="git_clean"), ctx)

    assert result.status is ToolStatus.DENIED
    assert (history / "scratch.txt").exists()

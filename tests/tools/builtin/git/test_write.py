"""The git tools that change a repository, and the admin ones, on real repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CallTool
from tests.tools.builtin.git.conftest import ok, run_git

from toolrun.permissions.approvals import Approver, AutoApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import ToolRegistry, ToolStatus

Git = Any


@pytest.fixture
def approver() -> Approver:
    """An operator who approves everything, the dangerous calls of the admin tools too."""
    return AutoApprover(dangerous=True)


def test_add_then_commit_records_a_commit_with_its_files(
    call_tool: CallTool, history: Path, git: Git
) -> None:
    (history / "lib.py").write_text("X = 1\n")

    staged = ok(call_tool("git_add", paths=["lib.py"]))["entries"]
    assert staged == [
        {"path": "lib.py", "index": "added", "worktree": "unmodified", "conflicted": False}
    ]
    made = ok(call_tool("git_commit", message="Add lib\n\nWith a body.", author="Carol <c@x.org>"))

    assert made["commit"]["subject"] == "Add lib"
    assert made["commit"]["body"] == "With a body."
    assert made["commit"]["author_name"] == "Carol"
    assert made["files"] == [{"added": 1, "deleted": 0, "path": "lib.py"}]
    assert git("log", "-1", "--format=%s %an").strip() == "Add lib Carol"


def test_commit_without_a_configured_user_uses_the_default_identity(
    call_tool: CallTool, history: Path, git: Git
) -> None:
    (history / "app.py").write_text("changed\n")

    made = ok(call_tool("git_commit", message="All tracked", all=True))

    assert (made["commit"]["author_name"], made["commit"]["committer_email"]) == (
        "toolrun",
        "toolrun@localhost",
    )
    assert git("status", "--porcelain") == ""


def test_commit_with_nothing_staged_fails_with_gits_reason(
    call_tool: CallTool, history: Path
) -> None:
    result = call_tool("git_commit", message="nothing")

    assert result.status is ToolStatus.ERROR
    assert result.error is not None
    assert result.error.startswith("git commit failed:")
    assert "nothing to commit" in result.error


def test_branch_create_switch_and_back(call_tool: CallTool, history: Path, git: Git) -> None:
    made = ok(call_tool("git_branch_create", name="feature/x", start="HEAD~1"))
    assert made["commit"] == git("rev-parse", "HEAD~1").strip()

    assert ok(call_tool("git_switch", branch="feature/x"))["head"] == "feature/x"
    assert (history / "app.py").read_text() == "def main():\n    return 1\n"
    assert ok(call_tool("git_switch", branch="fresh", create=True))["head"] == "fresh"
    detached = ok(call_tool("git_switch", branch="main", detach=True))
    assert detached["head"] is None

    bad = call_tool("git_branch_create", name="bad..name")
    assert bad.status is ToolStatus.ERROR
    assert bad.error == "'bad..name' is not a valid branch name"


def test_stash_push_list_and_pop(call_tool: CallTool, history: Path) -> None:
    (history / "app.py").write_text("work in progress\n")

    pushed = ok(call_tool("git_stash", action="push", message="wip"))
    assert [s["message"] for s in pushed["stashes"]] == ["On main: wip"]
    assert (history / "app.py").read_text() == "def main():\n    return 2\n"

    popped = ok(call_tool("git_stash", action="pop"))
    assert popped["stashes"] == []
    assert (history / "app.py").read_text() == "work in progress\n"


def test_reset_clean_and_push(call_tool: CallTool, history: Path, git: Git) -> None:
    run_git(history.parent, "init", "-q", "--bare", "-b", "main", str(history / "origin.git"))
    git("remote", "add", "origin", str(history / "origin.git"))
    (history / ".gitignore").write_text("origin.git/\n")
    (history / "scratch.txt").write_text("temporary\n")

    assert ok(call_tool("git_clean", dry_run=True))["removed"] == [".gitignore", "scratch.txt"]
    assert ok(call_tool("git_clean", paths=["scratch.txt"]))["removed"] == ["scratch.txt"]
    assert not (history / "scratch.txt").exists()
    pushed = ok(call_tool("git_push", set_upstream=True))
    assert pushed["branch"] == "main"
    assert run_git(history / "origin.git", "log", "--format=%s").split("\n")[0] == "Return two"

    ok(call_tool("git_reset", revision="HEAD~1", mode="hard"))
    assert (history / "app.py").read_text() == "def main():\n    return 1\n"
    refused = call_tool("git_push")  # behind the remote now
    assert refused.status is ToolStatus.ERROR
    assert ok(call_tool("git_push", force=True))["branch"] == "main"
    assert run_git(history / "origin.git", "log", "-1", "--format=%s").strip() == "Add the app"


def test_levels_split_reading_changing_and_destroying(registry: ToolRegistry) -> None:
    levels = {tool.descriptor.name: tool.descriptor for tool in registry.list()}
    readers = {"git_status", "git_diff", "git_log", "git_show", "git_blame", "git_branches"}
    writers = {"git_add", "git_commit", "git_branch_create", "git_switch", "git_stash"}
    admins = {"git_reset", "git_clean", "git_push"}

    assert {n for n, d in levels.items() if n.startswith("git_")} == readers | writers | admins
    assert {levels[n].permission for n in readers} == {PermissionLevel.READ_ONLY}
    assert {levels[n].permission for n in writers} == {PermissionLevel.READ_WRITE}
    assert {levels[n].permission for n in admins} == {PermissionLevel.ADMIN}
    assert all(levels[n].requires_confirmation for n in admins)
    assert not any(levels[n].requires_confirmation for n in readers | writers)

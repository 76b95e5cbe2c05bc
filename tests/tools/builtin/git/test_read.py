"""The read-only git tools on real repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CallTool
from tests.tools.builtin.git.conftest import ok, run_git

from toolrun.tools import ToolStatus

Git = Any


def test_status_reports_each_paths_index_and_worktree_state(
    call_tool: CallTool, history: Path, git: Git
) -> None:
    (history / "app.py").write_text("changed\n")
    (history / "new.txt").write_text("new\n")
    (history / "staged.txt").write_text("staged\n")
    git("add", "staged.txt")
    git("mv", "README.md", "GUIDE.md")

    status = ok(call_tool("git_status"))

    entries = {entry["path"]: entry for entry in status["entries"]}
    assert entries["app.py"] == {
        "path": "app.py",
        "index": "unmodified",
        "worktree": "modified",
        "conflicted": False,
    }
    assert (entries["staged.txt"]["index"], entries["staged.txt"]["worktree"]) == (
        "added",
        "unmodified",
    )
    assert entries["GUIDE.md"]["index"] == "renamed"
    assert entries["GUIDE.md"]["orig_path"] == "README.md"
    assert entries["new.txt"]["index"] == "untracked"
    assert status["branch"]["head"] == "main"
    assert status["clean"] is False


def test_status_of_a_clean_repository_with_an_upstream(
    call_tool: CallTool, history: Path, git: Git, tmp_path: Path
) -> None:
    git("clone", "-q", "--bare", str(history), str(history / "remote.git"))
    git("remote", "add", "origin", str(history / "remote.git"))
    git("fetch", "-q", "origin")
    git("branch", "-q", "--set-upstream-to=origin/main")
    git("commit", "-q", "--allow-empty", "-m", "ahead by one")
    (history / ".gitignore").write_text("remote.git/\n.gitignore\n")

    status = ok(call_tool("git_status"))

    assert status["clean"] is True
    branch = status["branch"]
    assert (branch["head"], branch["upstream"], branch["ahead"], branch["behind"]) == (
        "main",
        "origin/main",
        1,
        0,
    )


def test_a_merge_conflict_is_reported_as_unmerged(
    call_tool: CallTool, history: Path, git: Git
) -> None:
    git("switch", "-q", "-c", "other")
    (history / "app.py").write_text("def main():\n    return 3\n")
    git("commit", "-q", "-am", "three")
    git("switch", "-q", "main")
    (history / "app.py").write_text("def main():\n    return 4\n")
    git("commit", "-q", "-am", "four")
    with pytest.raises(Exception, match="exit status 1"):
        git("merge", "-q", "other")

    status = ok(call_tool("git_status"))

    (entry,) = status["entries"]
    assert entry == {
        "path": "app.py",
        "index": "unmerged",
        "worktree": "unmerged",
        "conflicted": True,
        "conflict": "both modified",
    }


def test_diff_of_the_worktree_the_index_and_between_revisions(
    call_tool: CallTool, history: Path, git: Git
) -> None:
    (history / "app.py").write_text("def main():\n    return 3\n")

    unstaged = ok(call_tool("git_diff"))
    assert "-    return 2\n+    return 3\n" in unstaged["patch"]
    assert unstaged["files"] == [{"added": 1, "deleted": 1, "path": "app.py"}]
    assert ok(call_tool("git_diff", staged=True))["patch"] == ""

    between = ok(call_tool("git_diff", **{"from": "HEAD~1", "to": "HEAD"}, paths=["app.py"]))
    assert "-    return 1\n+    return 2\n" in between["patch"]
    assert ok(call_tool("git_diff", **{"from": "HEAD~1"}, paths=["README.md"]))["files"] == []


def test_log_gives_structured_commits_filtered_by_author_and_path(
    call_tool: CallTool, history: Path
) -> None:
    commits = ok(call_tool("git_log"))["commits"]

    assert [c["subject"] for c in commits] == ["Return two", "Add the app"]
    assert (commits[0]["author_name"], commits[0]["author_email"]) == ("Bob", "bob@example.com")
    assert commits[0]["parents"] == [commits[1]["commit"]]
    assert commits[1]["parents"] == []
    by_alice = ok(call_tool("git_log", author="alice"))["commits"]
    assert [c["subject"] for c in by_alice] == ["Add the app"]
    readme = ok(call_tool("git_log", paths=["README.md"], max_count=5))["commits"]
    assert [c["subject"] for c in readme] == ["Add the app"]
    assert ok(call_tool("git_log", until="2000-01-01"))["commits"] == []


def test_show_gives_a_commit_and_a_file_at_a_revision(call_tool: CallTool, history: Path) -> None:
    shown = ok(call_tool("git_show"))
    assert shown["commit"]["subject"] == "Return two"
    assert "+    return 2" in shown["patch"]

    old = ok(call_tool("git_show", revision="HEAD~1", path="app.py"))
    assert old["content"] == "def main():\n    return 1\n"


def test_blame_names_who_changed_each_line(call_tool: CallTool, history: Path) -> None:
    lines = ok(call_tool("git_blame", path="app.py"))["lines"]

    assert [(line["line"], line["author"], line["text"]) for line in lines] == [
        (1, "Alice", "def main():"),
        (2, "Bob", "    return 2"),
    ]
    assert lines[1]["summary"] == "Return two"
    ranged = ok(call_tool("git_blame", path="app.py", start_line=2, end_line=2))["lines"]
    assert [line["line"] for line in ranged] == [2]


def test_branches_mark_the_current_one(call_tool: CallTool, history: Path, git: Git) -> None:
    git("branch", "feature")

    found = ok(call_tool("git_branches"))

    assert [b["name"] for b in found["branches"]] == ["feature", "main"]
    assert found["current"] == "main"
    assert found["branches"][0]["subject"] == "Return two"


def test_a_workspace_that_is_not_a_repository_is_a_clear_error(
    call_tool: CallTool, workspace: Path
) -> None:
    result = call_tool("git_status")

    assert result.status is ToolStatus.ERROR
    assert result.error == "not a git repository: . (run git init first)"


def test_a_repository_in_a_subdirectory(call_tool: CallTool, workspace: Path) -> None:
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "x.txt").write_text("x\n")
    run_git(nested, "init", "-q", "-b", "main")

    entries = ok(call_tool("git_status", repo="vendor/lib"))["entries"]

    assert [entry["path"] for entry in entries] == ["vendor/lib/x.txt"]

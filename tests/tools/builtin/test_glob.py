"""glob tool: pattern matching over the workspace, newest first, ignores and caps honoured."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from toolrun.config import Settings
from toolrun.permissions.approvals import AutoApprover
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, ToolStatus

CallTool = Callable[..., ToolResult]

BASE_NS = 1_700_000_000 * 10**9


def make(root: Path, *paths: str) -> None:
    for relative in paths:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{relative}\n")


def age(root: Path, oldest_first: Iterable[str]) -> None:
    """Give the files strictly increasing mtimes, one second apart, in the order listed."""
    for step, relative in enumerate(oldest_first):
        stamp = BASE_NS + step * 10**9
        os.utime(root / relative, ns=(stamp, stamp))


def found(call_tool: CallTool, **arguments: Any) -> list[str]:
    result = call_tool("glob", **arguments)
    assert result.status is ToolStatus.SUCCESS, result.error
    files: list[str] = result.output["files"]
    return files


def test_recursive_pattern_finds_files_at_every_depth(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "a.py", "pkg/b.py", "pkg/deep/c.py", "notes.txt", "pkg/d.pyc")

    assert sorted(found(call_tool, pattern="**/*.py")) == ["a.py", "pkg/b.py", "pkg/deep/c.py"]


def test_single_star_pattern_is_top_level_only(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "a.py", "pkg/b.py", "pkg/deep/c.py")

    assert found(call_tool, pattern="*.py") == ["a.py"]


def test_pattern_anchored_under_a_directory(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "src/a.ts", "src/x/y/b.ts", "lib/c.ts", "d.ts", "src/e.tsx")

    assert sorted(found(call_tool, pattern="src/**/*.ts")) == ["src/a.ts", "src/x/y/b.ts"]


def test_brace_alternatives(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "a.ts", "b.tsx", "c.js", "src/d.tsx")

    assert sorted(found(call_tool, pattern="**/*.{ts,tsx}")) == ["a.ts", "b.tsx", "src/d.tsx"]
    assert sorted(found(call_tool, pattern="{a,c}.*")) == ["a.ts", "c.js"]


def test_question_mark_and_character_class(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "file1.txt", "file2.txt", "file3.txt", "file10.txt", "file.txt")

    assert sorted(found(call_tool, pattern="file?.txt")) == ["file1.txt", "file2.txt", "file3.txt"]
    assert sorted(found(call_tool, pattern="file[12].txt")) == ["file1.txt", "file2.txt"]
    assert sorted(found(call_tool, pattern="file[!12].txt")) == ["file3.txt"]


def test_results_are_newest_first(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "old.py", "mid/mid.py", "new.py", "newest/x.py")
    age(workspace, ["new.py", "old.py", "newest/x.py", "mid/mid.py"])

    assert found(call_tool, pattern="**/*.py") == ["mid/mid.py", "newest/x.py", "old.py", "new.py"]


def test_equal_mtimes_are_ordered_by_path(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "c.py", "a.py", "b.py")
    for name in ("a.py", "b.py", "c.py"):
        os.utime(workspace / name, ns=(BASE_NS, BASE_NS))

    assert found(call_tool, pattern="*.py") == ["a.py", "b.py", "c.py"]


def test_gitignore_is_respected_without_a_git_repository(
    workspace: Path, call_tool: CallTool
) -> None:
    make(workspace, "keep.py", "build/gen.py", "debug.py")
    (workspace / ".gitignore").write_text("build/\ndebug.py\n")
    assert not (workspace / ".git").exists()

    assert found(call_tool, pattern="**/*.py") == ["keep.py"]


def test_gitignore_can_be_disregarded(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "keep.py", "build/gen.py", "debug.py")
    (workspace / ".gitignore").write_text("build/\ndebug.py\n")

    listed = found(call_tool, pattern="**/*.py", respect_gitignore=False)

    assert sorted(listed) == ["build/gen.py", "debug.py", "keep.py"]


def test_hidden_files_are_skipped_by_default(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "visible.cfg", ".secret.cfg", ".config/app.cfg")

    assert found(call_tool, pattern="**/*.cfg") == ["visible.cfg"]


def test_hidden_files_are_listed_on_request_but_never_git_internals(
    workspace: Path, call_tool: CallTool
) -> None:
    make(workspace, "visible.cfg", ".secret.cfg", ".config/app.cfg", ".git/repo.cfg")

    listed = found(call_tool, pattern="**/*.cfg", include_hidden=True)

    assert sorted(listed) == [".config/app.cfg", ".secret.cfg", "visible.cfg"]


def test_result_cap_keeps_the_newest_and_says_so(workspace: Path) -> None:
    names = [f"f{index}.txt" for index in range(8)]
    make(workspace, *names)
    age(workspace, names)
    settings = Settings(workspace=workspace, glob_max_results=5)
    ctx = ToolContext.create(settings, approver=AutoApprover())
    executor = Executor(ToolRegistry.with_builtins())

    result = executor.execute(ToolCall(tool_name="glob", arguments={"pattern": "*.txt"}), ctx)

    assert result.status is ToolStatus.SUCCESS, result.error
    output = result.output
    assert output["files"] == ["f7.txt", "f6.txt", "f5.txt", "f4.txt", "f3.txt"]
    assert output["count"] == 5
    assert output["total_matches"] == 8
    assert output["truncated"] is True
    assert output["timed_out"] is False
    assert "5" in output["notice"]
    assert "8" in output["notice"]


def test_uncapped_result_reports_no_truncation(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "a.txt", "b.txt")

    result = call_tool("glob", pattern="*.txt")

    assert result.output["count"] == 2
    assert result.output["total_matches"] == 2
    assert result.output["truncated"] is False
    assert result.output["notice"] is None


def test_path_narrows_the_search_and_results_stay_workspace_relative(
    workspace: Path, call_tool: CallTool
) -> None:
    make(workspace, "a.ts", "src/b.ts", "src/sub/c.ts")

    assert found(call_tool, pattern="*.ts", path="src") == ["src/b.ts"]
    assert sorted(found(call_tool, pattern="**/*.ts", path="src")) == ["src/b.ts", "src/sub/c.ts"]


def test_no_match_is_success_with_an_empty_list(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, "a.py")

    result = call_tool("glob", pattern="**/*.rs")

    assert result.status is ToolStatus.SUCCESS
    assert result.output["files"] == []
    assert result.output["count"] == 0


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("a.py", ToolStatus.ERROR, "not a directory: a.py"),
        ("nowhere", ToolStatus.ERROR, "not a directory: nowhere"),
        ("../outside", ToolStatus.BLOCKED, "outside the workspace"),
    ],
)
def test_unusable_path_is_refused(
    workspace: Path, call_tool: CallTool, path: str, status: ToolStatus, message: str
) -> None:
    make(workspace, "a.py")

    result = call_tool("glob", pattern="*", path=path)

    assert result.status is status
    assert message in (result.error or "")


def test_symlinked_directory_is_not_followed_out_of_the_workspace(
    workspace: Path, call_tool: CallTool
) -> None:
    make(workspace, "inside.txt")
    (workspace / "escape").symlink_to(workspace.parent / "outside")

    assert found(call_tool, pattern="**/*.txt") == ["inside.txt"]


def test_unclosed_bracket_is_an_error(call_tool: CallTool) -> None:
    result = call_tool("glob", pattern="file[12.txt")

    assert result.status is ToolStatus.ERROR
    assert "unclosed '['" in (result.error or "")


def test_unclosed_brace_is_an_error(call_tool: CallTool) -> None:
    result = call_tool("glob", pattern="*.{ts,tsx")

    assert result.status is ToolStatus.ERROR
    assert "unclosed '{'" in (result.error or "")

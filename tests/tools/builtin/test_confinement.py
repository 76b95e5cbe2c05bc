"""Every known workspace escape, tried through each file tool with real links on disk.

A refused call ends with status "blocked", leaks nothing of the outside files and changes
nothing anywhere on disk; paths that only look odd (`..test`, `te..st`) keep working.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.snapshots import snapshot

from toolrun.sandbox.paths import OUTSIDE
from toolrun.tools import ToolResult

CallTool = Callable[..., ToolResult]
LEAK_MARKER = "top secret"
FILE_TOOLS = ("read", "write", "edit")
ALL_TOOLS = (*FILE_TOOLS, "glob", "grep")


def path_arguments(tool: str, path: Any) -> dict[str, Any]:
    """Arguments that make `tool` use `path` and would expose or change a secret if obeyed."""
    if tool == "read":
        return {"file_path": path}
    if tool == "write":
        return {"file_path": path, "content": "pwned\n"}
    if tool == "edit":
        return {"file_path": path, "old_string": "top", "new_string": "pwned"}
    if tool == "glob":
        return {"pattern": "**", "path": path, "include_hidden": True, "respect_gitignore": False}
    return {"pattern": "top|hello|root", "path": path, "output_mode": "content"}


INSIDE_FILES = ("notes.txt", "..test", "te..st", "...", "sub/inner.txt", "sub/..test")
INSIDE_FILES += ("a/b/c/deep.txt", "..dir/f.txt", "di..r/f.txt")

LINKS = {
    # pointing outside
    "link_file": "../outside/secret.txt",
    "link_dir": "../outside",
    "abs_file_link": "{tmp}/outside/secret.txt",
    "abs_dir_link": "{tmp}/outside",
    "sub/nested_link": "../../outside/secret.txt",
    "sub/nested_dir_link": "../../outside/dir",
    "a/b/c/deep_dir_link": "../../../../outside/dir",
    "dangling_file": "../outside/missing.txt",
    "dangling_dir": "../outside/missing_dir",
    "dangling_abs": "/nonexistent-toolrun-target/file.txt",
    "chain1": "chain2",
    "chain2": "chain3",
    "chain3": "../outside/secret.txt",
    "dir_chain": "link_dir",
    "hop_link": "../outside/hop",
    "up_link": "..",
    "root_link": "/",
    "sibling_link": "../project2",
    "prefix_link": "{tmp}/project_backup/secret.txt",
    # staying inside
    "inner_link": "notes.txt",
    "inner_chain": "inner_link",
    "inner_dir_link": "sub",
    "dangling_inside": "created_later.txt",
}


@pytest.fixture
def tree(workspace: Path) -> Path:
    """Workspace files, real prefix-sibling directories, and links in and out, all on disk."""
    tmp = workspace.parent
    outside = tmp / "outside"
    (outside / "dir").mkdir()
    (outside / "dir" / "far.txt").write_text("top secret far\n")
    (outside / "dir" / "notes.txt").write_text("top secret notes\n")
    (outside / "hop").symlink_to(outside / "secret.txt")
    for sibling in ("project2", "project_backup"):
        (tmp / sibling).mkdir()
        (tmp / sibling / "secret.txt").write_text(f"top secret in {sibling}\n")
    for name in INSIDE_FILES:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"hello from {name}\n")
    for name, target in LINKS.items():
        (workspace / name).symlink_to(target.format(tmp=tmp))
    return workspace


def fill(template: str, root: Path) -> str:
    return template.format(root=root, tmp=root.parent)


def assert_blocked(result: ToolResult) -> None:
    assert result.status == "blocked", result
    assert result.error is not None
    assert result.error.startswith(OUTSIDE), result.error
    assert LEAK_MARKER not in result.model_dump_json()


def assert_leaks_nothing(result: ToolResult) -> None:
    dumped = result.model_dump_json()
    assert LEAK_MARKER not in dumped
    assert "secret.txt" not in dumped
    assert "far.txt" not in dumped


# --- escapes: refused by every tool, nothing read, nothing changed -----------------------

ESCAPES = [
    pytest.param("{tmp}/project2/secret.txt", id="prefix-project2-absolute"),
    pytest.param("{tmp}/project2", id="prefix-project2-dir"),
    pytest.param("{root}2/secret.txt", id="prefix-root-string-plus-2"),
    pytest.param("{tmp}/project_backup/secret.txt", id="prefix-project_backup-absolute"),
    pytest.param("{root}_backup", id="prefix-root-string-plus-backup"),
    pytest.param("../project2/secret.txt", id="prefix-project2-relative"),
    pytest.param("../project_backup/secret.txt", id="prefix-project_backup-relative"),
    pytest.param("project/../../etc/passwd", id="traversal-project-etc-passwd"),
    pytest.param("../../../../../../../../../etc/passwd", id="traversal-etc-passwd-deep"),
    pytest.param("..", id="dotdot"),
    pytest.param("../", id="dotdot-slash"),
    pytest.param("../outside/secret.txt", id="dotdot-depth-1"),
    pytest.param("sub/../../outside/secret.txt", id="dotdot-depth-2"),
    pytest.param("a/b/../../../outside/secret.txt", id="dotdot-depth-3"),
    pytest.param("a/b/c/../../../../outside/secret.txt", id="dotdot-depth-4"),
    pytest.param("a/b/c/../../../../outside", id="dotdot-depth-4-dir"),
    pytest.param("missing/../../outside/secret.txt", id="dotdot-through-missing-dir"),
    pytest.param("notes.txt/../../outside/secret.txt", id="dotdot-through-file"),
    pytest.param("./sub/./../.././outside/secret.txt", id="dotdot-with-dot-segments"),
    pytest.param("sub//..//..//outside//secret.txt", id="dotdot-with-double-slashes"),
    pytest.param("..dir/../../outside/secret.txt", id="dotdot-after-dotdot-named-dir"),
    pytest.param("../outside/new.txt", id="dotdot-new-file"),
    pytest.param("../outside/newdir/new.txt", id="dotdot-new-dir"),
    pytest.param("{root}/../outside/secret.txt", id="absolute-root-dotdot"),
    pytest.param("{root}/sub/../../outside/secret.txt", id="absolute-nested-dotdot"),
    pytest.param("{tmp}/outside/secret.txt", id="absolute-outside-file"),
    pytest.param("{tmp}/outside", id="absolute-outside-dir"),
    pytest.param("{tmp}/outside/new.txt", id="absolute-outside-new-file"),
    pytest.param("{tmp}", id="absolute-workspace-parent"),
    pytest.param("/etc/passwd", id="absolute-etc-passwd"),
    pytest.param("/", id="absolute-filesystem-root"),
    pytest.param("notes.txt\x00", id="nul-at-end"),
    pytest.param("notes\x00.txt", id="nul-in-middle"),
    pytest.param("\x00", id="nul-only"),
    pytest.param("../outside/secret.txt\x00.txt", id="nul-after-escape"),
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
    pytest.param("link_file", id="symlink-file-out"),
    pytest.param("abs_file_link", id="symlink-file-out-absolute-target"),
    pytest.param("sub/nested_link", id="symlink-file-out-nested"),
    pytest.param("{root}/link_file", id="symlink-file-out-via-absolute-path"),
    pytest.param("link_dir", id="symlink-dir-out"),
    pytest.param("link_dir/secret.txt", id="symlink-dir-out-member"),
    pytest.param("link_dir/new.txt", id="symlink-dir-out-new-member"),
    pytest.param("link_dir/newdir/new.txt", id="symlink-dir-out-new-dir"),
    pytest.param("abs_dir_link/secret.txt", id="symlink-dir-out-absolute-target"),
    pytest.param("sub/nested_dir_link", id="symlink-dir-out-nested"),
    pytest.param("a/b/c/deep_dir_link/far.txt", id="symlink-dir-out-deep"),
    pytest.param("link_dir/../outside/secret.txt", id="symlink-dir-out-then-dotdot"),
    pytest.param("root_link/etc/passwd", id="symlink-to-filesystem-root"),
    pytest.param("root_link", id="symlink-to-filesystem-root-itself"),
    pytest.param("up_link", id="symlink-to-parent"),
    pytest.param("up_link/outside/secret.txt", id="symlink-to-parent-member"),
    pytest.param("sibling_link/secret.txt", id="symlink-to-prefix-sibling-dir"),
    pytest.param("prefix_link", id="symlink-to-prefix-sibling-file"),
    pytest.param("dangling_file", id="dangling-file-out"),
    pytest.param("dangling_dir", id="dangling-dir-out"),
    pytest.param("dangling_dir/new.txt", id="dangling-dir-out-member"),
    pytest.param("dangling_abs", id="dangling-absolute-out"),
    pytest.param("chain1", id="chain-file-out"),
    pytest.param("chain2", id="chain-file-out-from-middle"),
    pytest.param("dir_chain", id="chain-dir-out"),
    pytest.param("dir_chain/secret.txt", id="chain-dir-out-member"),
    pytest.param("hop_link", id="chain-hopping-outside"),
]


@pytest.mark.parametrize("template", ESCAPES)
@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_escape_is_blocked(call_tool: CallTool, tree: Path, tool: str, template: str) -> None:
    before = snapshot(tree.parent)
    result = call_tool(tool, **path_arguments(tool, fill(template, tree)))
    assert_blocked(result)
    assert snapshot(tree.parent) == before


NON_STRINGS = [
    pytest.param(123, id="int"),
    pytest.param(None, id="null"),
    pytest.param(True, id="bool"),
    pytest.param(1.5, id="float"),
    pytest.param(["notes.txt"], id="list"),
    pytest.param({"path": "notes.txt"}, id="object"),
]


@pytest.mark.parametrize("value", NON_STRINGS)
@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_non_string_path_is_a_schema_error(
    call_tool: CallTool, tree: Path, tool: str, value: object
) -> None:
    before = snapshot(tree.parent)
    result = call_tool(tool, **path_arguments(tool, value))
    assert result.status == "error"
    assert result.error is not None
    assert result.error.startswith("invalid arguments: parameter '")
    assert "must be string" in result.error
    assert snapshot(tree.parent) == before


# --- link loops: refused cleanly, never a crash --------------------------------------------

LOOPS = [
    pytest.param({"loop": "loop"}, "loop", id="self"),
    pytest.param({"loop": "loop"}, "loop/x.txt", id="self-member"),
    pytest.param({"loop_a": "loop_b", "loop_b": "loop_a"}, "loop_a", id="pair"),
    pytest.param({"loop_out": "../outside/loop_back"}, "loop_out", id="through-outside"),
]


@pytest.mark.parametrize(("links", "name"), LOOPS)
@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_link_loop_is_blocked_not_a_crash(
    call_tool: CallTool, tree: Path, tool: str, links: dict[str, str], name: str
) -> None:
    for link, target in links.items():
        (tree / link).symlink_to(target)
    (tree.parent / "outside" / "loop_back").symlink_to("../project/loop_out")
    before = snapshot(tree.parent)
    result = call_tool(tool, **path_arguments(tool, name))
    assert_blocked(result)
    assert snapshot(tree.parent) == before


# --- paths that look odd but stay inside keep working --------------------------------------

INSIDE_FILE_CASES = [
    pytest.param("..test", "..test", id="name-starting-with-dotdot"),
    pytest.param("te..st", "te..st", id="name-containing-dotdot"),
    pytest.param("...", "...", id="name-three-dots"),
    pytest.param("sub/..test", "sub/..test", id="nested-name-starting-with-dotdot"),
    pytest.param("..dir/f.txt", "..dir/f.txt", id="dir-name-starting-with-dotdot"),
    pytest.param("di..r/f.txt", "di..r/f.txt", id="dir-name-containing-dotdot"),
    pytest.param("./notes.txt", "notes.txt", id="dot-slash"),
    pytest.param("sub/../notes.txt", "notes.txt", id="dotdot-staying-inside"),
    pytest.param("a/b/c/../../../notes.txt", "notes.txt", id="dotdot-deep-staying-inside"),
    pytest.param("../project/notes.txt", "notes.txt", id="out-and-back-in"),
    pytest.param("{root}/notes.txt", "notes.txt", id="absolute-inside"),
    pytest.param("{root}/a/b/c/deep.txt", "a/b/c/deep.txt", id="absolute-inside-nested"),
    pytest.param("{root}/sub/../notes.txt", "notes.txt", id="absolute-inside-with-dotdot"),
    pytest.param("inner_link", "notes.txt", id="symlink-inside-to-inside"),
    pytest.param("inner_chain", "notes.txt", id="symlink-chain-inside"),
    pytest.param("inner_dir_link/inner.txt", "sub/inner.txt", id="symlink-dir-inside"),
]


@pytest.mark.parametrize(("template", "real"), INSIDE_FILE_CASES)
def test_read_inside_path_is_allowed(
    call_tool: CallTool, tree: Path, template: str, real: str
) -> None:
    result = call_tool("read", file_path=fill(template, tree))
    assert result.status == "success", result
    assert f"hello from {real}" in result.output["content"]


@pytest.mark.parametrize(("template", "real"), INSIDE_FILE_CASES)
def test_write_inside_path_is_allowed(
    call_tool: CallTool, tree: Path, template: str, real: str
) -> None:
    links = {name: os.readlink(tree / name) for name in LINKS}
    outside_before = snapshot(tree.parent / "outside")
    result = call_tool("write", file_path=fill(template, tree), content="written\n")
    assert result.status == "success", result
    assert result.output["file_path"] == real
    assert (tree / real).read_text() == "written\n"
    assert {name: os.readlink(tree / name) for name in LINKS} == links
    assert snapshot(tree.parent / "outside") == outside_before


@pytest.mark.parametrize(("template", "real"), INSIDE_FILE_CASES)
def test_edit_inside_path_is_allowed(
    call_tool: CallTool, tree: Path, template: str, real: str
) -> None:
    outside_before = snapshot(tree.parent / "outside")
    result = call_tool("edit", file_path=fill(template, tree), old_string="hello", new_string="bye")
    assert result.status == "success", result
    assert (tree / real).read_text() == f"bye from {real}\n"
    assert snapshot(tree.parent / "outside") == outside_before


@pytest.mark.parametrize(("template", "real"), INSIDE_FILE_CASES)
def test_grep_inside_file_is_allowed(
    call_tool: CallTool, tree: Path, template: str, real: str
) -> None:
    result = call_tool("grep", pattern="hello", path=fill(template, tree), output_mode="content")
    assert result.status == "success", result
    assert f"hello from {real}" in result.output["content"]


@pytest.mark.parametrize(
    ("template", "real"),
    [
        pytest.param("..new", "..new", id="name-starting-with-dotdot"),
        pytest.param("te..new", "te..new", id="name-containing-dotdot"),
        pytest.param("..newdir/x..y/f.txt", "..newdir/x..y/f.txt", id="new-dirs-with-dotdot"),
        pytest.param("{root}/new/file.txt", "new/file.txt", id="absolute-new-file"),
        pytest.param("dangling_inside", "created_later.txt", id="dangling-link-inside"),
        pytest.param("inner_dir_link/new.txt", "sub/new.txt", id="new-file-via-inside-dir-link"),
    ],
)
def test_write_new_inside_path_is_allowed(
    call_tool: CallTool, tree: Path, template: str, real: str
) -> None:
    outside_before = snapshot(tree.parent / "outside")
    result = call_tool("write", file_path=fill(template, tree), content="fresh\n")
    assert result.status == "success", result
    assert result.output["created"] is True
    assert (tree / real).read_text() == "fresh\n"
    assert not (tree / real).is_symlink()
    assert snapshot(tree.parent / "outside") == outside_before


INSIDE_DIR_CASES = [
    pytest.param(".", "", id="dot"),
    pytest.param("{root}", "", id="absolute-root"),
    pytest.param("{root}/", "", id="absolute-root-trailing-slash"),
    pytest.param("sub", "sub/", id="subdir"),
    pytest.param("sub/..", "", id="subdir-dotdot"),
    pytest.param("../project/sub", "sub/", id="out-and-back-in"),
    pytest.param("{root}/sub", "sub/", id="absolute-subdir"),
    pytest.param("..dir", "..dir/", id="dir-name-starting-with-dotdot"),
    pytest.param("di..r", "di..r/", id="dir-name-containing-dotdot"),
    pytest.param("inner_dir_link", "sub/", id="symlink-dir-inside"),
]


@pytest.mark.parametrize(("template", "prefix"), INSIDE_DIR_CASES)
@pytest.mark.parametrize("tool", ["glob", "grep"])
def test_search_in_inside_dir_is_allowed_and_stays_inside(
    call_tool: CallTool, tree: Path, tool: str, template: str, prefix: str
) -> None:
    result = call_tool(tool, **path_arguments(tool, fill(template, tree)))
    assert result.status == "success", result
    assert_leaks_nothing(result)
    listed = result.output["files"] if tool == "glob" else result.output["content"].splitlines()
    assert listed
    assert all(line.startswith(prefix) for line in listed), listed


# --- glob and grep never walk through a link that leaves the workspace ----------------------


def _real_files(root: Path) -> set[str]:
    return {name for name in INSIDE_FILES if (root / name).is_file()}


@pytest.mark.parametrize("hidden", [False, True], ids=["plain", "hidden"])
@pytest.mark.parametrize("gitignore", [True, False], ids=["gitignore", "no-gitignore"])
@pytest.mark.parametrize(
    "pattern",
    ["**", "**/*.txt", "**/secret.txt", "link_dir/**", "*/*", "**/far.txt"],
)
def test_glob_lists_nothing_reached_through_outside_links(
    call_tool: CallTool, tree: Path, pattern: str, hidden: bool, gitignore: bool
) -> None:
    result = call_tool("glob", pattern=pattern, include_hidden=hidden, respect_gitignore=gitignore)
    assert result.status == "success", result
    assert_leaks_nothing(result)
    for name in result.output["files"]:
        path = tree / name
        assert not path.is_symlink(), name
        assert path.resolve().is_relative_to(tree), name
        assert name in _real_files(tree), name


@pytest.mark.parametrize(
    "pattern",
    [
        "../outside/*",
        "../outside/**",
        "../**",
        "{tmp}/outside/*",
        "{tmp}/**",
        "/etc/passwd",
        "../project2/*",
    ],
)
def test_glob_pattern_cannot_reach_outside(call_tool: CallTool, tree: Path, pattern: str) -> None:
    result = call_tool("glob", pattern=fill(pattern, tree), include_hidden=True)
    assert result.status == "success", result
    assert result.output["files"] == []
    assert_leaks_nothing(result)


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({}, id="plain"),
        pytest.param({"-i": True}, id="ignore-case"),
        pytest.param({"glob": "**/secret.txt"}, id="glob-secret"),
        pytest.param({"glob": "link_dir/**"}, id="glob-link-dir"),
        pytest.param({"glob": "../outside/*"}, id="glob-dotdot"),
        pytest.param({"type": "txt"}, id="type-txt"),
        pytest.param({"multiline": True}, id="multiline"),
    ],
)
def test_grep_searches_nothing_reached_through_outside_links(
    call_tool: CallTool, tree: Path, mode: str, extra: dict[str, Any]
) -> None:
    result = call_tool("grep", pattern=LEAK_MARKER, output_mode=mode, **extra)
    assert result.status == "success", result
    assert result.output["total"] == 0
    assert_leaks_nothing(result)


def test_grep_still_finds_the_word_inside(call_tool: CallTool, tree: Path) -> None:
    """Control: the same search finds a real inside file, so the empty results above mean it."""
    (tree / "sub" / "mine.txt").write_text(f"{LEAK_MARKER} but mine\n")
    result = call_tool("grep", pattern=LEAK_MARKER, output_mode="content")
    assert result.status == "success", result
    assert result.output["content"] == f"sub/mine.txt:1:{LEAK_MARKER} but mine"


# --- a directory swapped for an outside link between the check and the use -----------------


def swap_for_link(directory: Path, target: Path) -> None:
    directory.rename(directory.with_name(directory.name + ".orig"))
    directory.symlink_to(target)


def _swap_then(original: Callable[..., Any], directory: Path, target: Path) -> Callable[..., Any]:
    def swapped(*args: Any, **kwargs: Any) -> Any:
        if not directory.is_symlink():
            swap_for_link(directory, target)
        return original(*args, **kwargs)

    return swapped


@pytest.fixture
def decoy(tree: Path) -> Path:
    """An outside directory shaped like `sub`, holding secrets under the same names."""
    base = tree.parent / "outside" / "decoy"
    base.mkdir()
    (base / "inner.txt").write_text(f"{LEAK_MARKER} decoy hello\n")
    (base / "new.txt").write_text(f"{LEAK_MARKER} decoy new\n")
    return base


@pytest.mark.parametrize(
    ("tool", "hook", "name"),
    [
        pytest.param("read", "_files.read_bytes", "sub/inner.txt", id="read"),
        pytest.param("edit", "_files.read_bytes", "sub/inner.txt", id="edit-before-read"),
        pytest.param("edit", "_files.write_bytes_atomic", "sub/inner.txt", id="edit-before-write"),
        pytest.param("write", "write.read_bytes", "sub/inner.txt", id="write-before-read"),
        pytest.param("write", "_files.write_bytes_atomic", "sub/inner.txt", id="write-replace"),
        pytest.param("write", "_files.write_bytes_atomic", "sub/new.txt", id="write-new-file"),
    ],
)
def test_file_tool_after_dir_swapped_for_outside_link_is_blocked(
    call_tool: CallTool,
    tree: Path,
    decoy: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    hook: str,
    name: str,
) -> None:
    if name == "sub/new.txt":
        (decoy / "new.txt").unlink()
    module, function = hook.split(".")
    owner = importlib.import_module(f"toolrun.tools.builtin.{module}")
    monkeypatch.setattr(owner, function, _swap_then(getattr(owner, function), tree / "sub", decoy))
    arguments = path_arguments(tool, name)
    if tool == "edit":
        arguments["old_string"] = "hello"
    before = snapshot(decoy)
    result = call_tool(tool, **arguments)
    assert (tree / "sub").is_symlink(), "the swap did not happen"
    assert result.status == "blocked", result
    assert LEAK_MARKER not in result.model_dump_json()
    assert snapshot(decoy) == before


@pytest.mark.parametrize(
    ("tool", "path"),
    [
        pytest.param("glob", "sub", id="glob-subdir"),
        pytest.param("grep", "sub", id="grep-subdir"),
        pytest.param("grep", "sub/inner.txt", id="grep-file-in-subdir"),
    ],
)
def test_search_after_dir_swapped_for_outside_link_leaks_nothing(
    call_tool: CallTool,
    tree: Path,
    decoy: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    path: str,
) -> None:
    """Resolve saw a real directory; rg then starts on its path, now a link to outside."""
    owner = importlib.import_module(f"toolrun.tools.builtin.{tool}")
    monkeypatch.setattr(owner, "run_rg", _swap_then(owner.run_rg, tree / "sub", decoy))
    arguments = path_arguments(tool, path)
    if tool == "grep":
        arguments["pattern"] = "hello"
    result = call_tool(tool, **arguments)
    assert (tree / "sub").is_symlink(), "the swap did not happen"
    assert result.status in {"blocked", "success"}, result
    assert LEAK_MARKER not in result.model_dump_json()
    files = result.output["files"] if tool == "glob" and result.output else []
    assert "sub/new.txt" not in files

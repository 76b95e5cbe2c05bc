"""What an approver sees of a parked call: a diff for write and edit, the commands of a
bash line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolrun.permissions.preview import MAX_FILE_BYTES, preview
from toolrun.sandbox.paths import Workspace


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    return Workspace(root)


def test_a_write_replacing_a_file_is_a_diff(space: Workspace) -> None:
    shown = preview("write", {"file_path": "notes.txt", "content": "one\n2\nthree\n"}, space)

    assert shown["kind"] == "diff"
    assert shown["path"] == "notes.txt"
    assert shown["diff"].splitlines()[:2] == ["--- a/notes.txt", "+++ b/notes.txt"]
    assert "-two\n+2\n" in shown["diff"]


def test_a_new_file_is_all_added(space: Workspace) -> None:
    shown = preview("write", {"file_path": "sub/new.txt", "content": "hello\n"}, space)

    assert shown["diff"].splitlines() == [
        "--- /dev/null",
        "+++ b/sub/new.txt",
        "@@ -0,0 +1 @@",
        "+hello",
    ]


def test_an_edit_is_applied_to_the_file_as_it_is_now(space: Workspace) -> None:
    edit = {"file_path": "notes.txt", "old_string": "three", "new_string": "3"}
    assert "-three\n+3\n" in preview("edit", edit, space)["diff"]

    missing = preview("edit", {**edit, "old_string": "four"}, space)
    assert missing["diff"] is None
    assert missing["problem"] == "old_string is not in the file now: the edit would fail"
    twice = preview("edit", {**edit, "old_string": "o"}, space)
    assert twice["problem"] == "old_string is in the file 2 times: the edit would fail"
    every = preview(
        "edit", {**edit, "old_string": "o", "new_string": "0", "replace_all": True}, space
    )
    assert "+0ne\n" in every["diff"]


def test_paths_stay_in_the_workspace_and_large_files_are_not_read(
    space: Workspace, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("top secret\n")
    (space.root / "link").symlink_to(tmp_path / "secret.txt")
    (space.root / "big.txt").write_text("x" * (MAX_FILE_BYTES + 1))

    outside = preview("write", {"file_path": "link", "content": "y"}, space)
    big = preview("write", {"file_path": "big.txt", "content": "y"}, space)

    assert outside["diff"] is None
    assert outside["problem"].startswith("path is outside the workspace: link")
    assert "top secret" not in str(outside)
    assert big["problem"] == f"the file is over {MAX_FILE_BYTES // 1024} KiB: not diffed"


def test_a_bash_line_is_its_commands_in_the_workspace(space: Workspace) -> None:
    shown = preview("bash", {"command": "cd src && rm -rf build; sh -c 'echo hi'"}, space)
    broken = preview("bash", {"command": "echo 'unclosed"}, space)

    assert shown == {
        "kind": "command",
        "working_directory": str(space.root),
        "commands": [
            ["cd", "src"],
            ["rm", "-rf", "build"],
            ["sh", "-c", "echo hi"],
            ["echo", "hi"],
        ],
        "problem": None,
    }
    assert broken["commands"] == []
    assert broken["problem"].startswith("command could not be parsed")
    assert preview("grep", {"pattern": "x"}, space) == {"kind": "none"}


def test_a_fifo_or_a_directory_is_never_read(space: Workspace) -> None:
    os.mkfifo(space.root / "pipe")
    (space.root / "dir").mkdir()

    piped = preview("write", {"file_path": "pipe", "content": "y"}, space)  # would block
    folder = preview("edit", {"file_path": "dir", "old_string": "a", "new_string": "b"}, space)

    assert piped["diff"] is None
    assert piped["problem"] == "pipe is not a regular file"
    assert folder["diff"] is None
    assert "directory" in folder["problem"]

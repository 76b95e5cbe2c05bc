"""edit: exact, literal replacement that refuses missing or ambiguous matches."""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from toolrun.tools import ToolResult

CallTool = Callable[..., ToolResult]


def test_replaces_a_single_match(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "app.py"
    path.write_text("def old(x):\n    return x\n\nprint(old(1))  # call\n")

    result = call_tool("edit", file_path="app.py", old_string="def old(", new_string="def new(")

    assert result.status == "success"
    assert result.error is None
    assert result.output == {"file_path": "app.py", "replacements": 1, "lines": [1]}
    assert path.read_text() == "def new(x):\n    return x\n\nprint(old(1))  # call\n"
    assert "execution_time_ms" in result.metadata


def test_multiline_old_string(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("keep\nremove me\nand me\nkeep too\n")

    result = call_tool("edit", file_path="a.txt", old_string="remove me\nand me\n", new_string="")

    assert result.status == "success"
    assert result.output == {"file_path": "a.txt", "replacements": 1, "lines": [2]}
    assert path.read_text() == "keep\nkeep too\n"


def test_no_match_is_an_error(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("alpha\nbeta\n")

    result = call_tool("edit", file_path="a.txt", old_string="gamma", new_string="delta")

    assert result.status == "error"
    assert result.error == "old_string not found in a.txt"
    assert path.read_text() == "alpha\nbeta\n"


def test_old_string_is_not_a_regex(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("abc\n")

    result = call_tool("edit", file_path="a.txt", old_string="a.c", new_string="x")

    assert result.status == "error"
    assert result.error == "old_string not found in a.txt"
    assert path.read_text() == "abc\n"


def test_several_matches_without_replace_all_name_count_and_lines(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.py"
    original = "count = 0\nfor x in xs:\n    count += x\nprint(count)\n"
    path.write_text(original)

    result = call_tool("edit", file_path="a.py", old_string="count", new_string="total")

    assert result.status == "error"
    assert result.error == (
        "old_string matches 3 times in a.py (lines 1, 3, 4); "
        "add surrounding text to make it unique, or set replace_all"
    )
    assert path.read_text() == original


def test_many_matches_list_the_first_twenty_lines(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    original = "hit\n" * 25
    path.write_text(original)

    result = call_tool("edit", file_path="a.txt", old_string="hit", new_string="miss")

    first_twenty = ", ".join(str(n) for n in range(1, 21))
    assert result.status == "error"
    assert result.error == (
        f"old_string matches 25 times in a.txt (lines {first_twenty} ...); "
        "add surrounding text to make it unique, or set replace_all"
    )
    assert path.read_text() == original


def test_replace_all_replaces_every_match_and_reports_lines(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.py"
    path.write_text("count = 0\nfor x in xs:\n    count += x\nprint(count)\n")

    result = call_tool(
        "edit", file_path="a.py", old_string="count", new_string="total", replace_all=True
    )

    assert result.status == "success"
    assert result.output == {"file_path": "a.py", "replacements": 3, "lines": [1, 3, 4]}
    assert path.read_text() == "total = 0\nfor x in xs:\n    total += x\nprint(total)\n"


def test_replace_all_with_a_single_match(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")

    result = call_tool(
        "edit", file_path="a.txt", old_string="two", new_string="2", replace_all=True
    )

    assert result.output == {"file_path": "a.txt", "replacements": 1, "lines": [2]}
    assert path.read_text() == "one\n2\n"


def test_identical_strings_are_an_error(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("same\n")

    result = call_tool("edit", file_path="a.txt", old_string="same", new_string="same")

    assert result.status == "error"
    assert result.error == "old_string and new_string are identical; nothing to change"
    assert path.read_text() == "same\n"


def test_strings_differing_only_in_line_endings_are_identical(
    workspace: Path, call_tool: CallTool
) -> None:
    (workspace / "a.txt").write_bytes(b"a\r\nb\r\n")

    result = call_tool("edit", file_path="a.txt", old_string="a\r\nb", new_string="a\nb")

    assert result.status == "error"
    assert result.error == "old_string and new_string are identical; nothing to change"
    assert (workspace / "a.txt").read_bytes() == b"a\r\nb\r\n"


def test_dollar_and_backslashes_in_new_string_are_literal(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.txt"
    path.write_text("value = (old)\n")

    result = call_tool("edit", file_path="a.txt", old_string="(old)", new_string="\\1 $0 $& \\n")

    assert result.status == "success"
    assert path.read_text() == "value = \\1 $0 $& \\n\n"


def test_crlf_file_edited_with_lf_old_string_keeps_crlf(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\nfour\r\n")

    result = call_tool(
        "edit", file_path="win.txt", old_string="two\nthree\n", new_string="2\n2.5\n3\n"
    )

    assert result.status == "success"
    assert result.output == {"file_path": "win.txt", "replacements": 1, "lines": [2]}
    assert path.read_bytes() == b"one\r\n2\r\n2.5\r\n3\r\nfour\r\n"


def test_crlf_old_string_matches_a_crlf_file(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\n")

    result = call_tool("edit", file_path="win.txt", old_string="one\r\ntwo", new_string="1\r\n2")

    assert result.status == "success"
    assert path.read_bytes() == b"1\r\n2\r\n"


def test_lf_file_stays_lf(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "unix.txt"
    path.write_bytes(b"one\ntwo\n")

    result = call_tool("edit", file_path="unix.txt", old_string="one\r\n", new_string="1\r\n")

    assert result.status == "success"
    assert path.read_bytes() == b"1\ntwo\n"


@pytest.mark.parametrize(
    "original",
    [
        "名称 = 旧的服务器\n",
        "# 配置文件说明：请勿修改以下内容。\n名称 = 旧的服务器\n端口 = 8080\n",  # noqa: RUF001
    ],
    ids=["one-line", "config"],
)
def test_gbk_encoding_is_preserved(workspace: Path, call_tool: CallTool, original: str) -> None:
    path = workspace / "zh.conf"
    path.write_bytes(original.encode("gbk"))

    result = call_tool("edit", file_path="zh.conf", old_string="旧的", new_string="新的")

    assert result.status == "success", result.error
    assert result.output["replacements"] == 1
    assert path.read_bytes() == original.replace("旧的", "新的").encode("gbk")


def test_utf16_bom_and_crlf_are_preserved(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "u16.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "alpha\r\nbeta\r\n".encode("utf-16-le"))

    result = call_tool("edit", file_path="u16.txt", old_string="beta", new_string="贝塔")

    assert result.status == "success"
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "alpha\r\n贝塔\r\n".encode("utf-16-le")


def test_empty_old_string_is_rejected_by_validation(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("text\n")

    result = call_tool("edit", file_path="a.txt", old_string="", new_string="x")

    assert result.status == "error"
    assert result.error == "invalid arguments: parameter 'old_string' must not be empty"
    assert path.read_text() == "text\n"


def test_refuses_when_the_file_changed_since_it_was_read(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.txt"
    path.write_text("name = one\n")
    assert call_tool("read", file_path="a.txt").status == "success"
    path.write_text("name = one\nadded = by someone else\n")

    result = call_tool("edit", file_path="a.txt", old_string="one", new_string="two")

    assert result.status == "error"
    assert result.error == "a.txt changed since it was last read; read it again first"
    assert path.read_text() == "name = one\nadded = by someone else\n"


def test_refuses_when_the_file_changed_since_the_last_edit(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.txt"
    path.write_text("a = 1\nb = 2\n")
    assert call_tool("edit", file_path="a.txt", old_string="1", new_string="10").status == (
        "success"
    )
    path.write_text("a = 10\nb = 2\nc = 3\n")
    seen = path.stat().st_mtime_ns
    os.utime(path, ns=(seen + 5_000_000_000, seen + 5_000_000_000))

    result = call_tool("edit", file_path="a.txt", old_string="2", new_string="20")

    assert result.status == "error"
    assert result.error == "a.txt changed since it was last read; read it again first"
    assert path.read_text() == "a = 10\nb = 2\nc = 3\n"


def test_consecutive_edits_in_one_session(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("a = 1\nb = 2\n")
    call_tool("read", file_path="a.txt")

    first = call_tool("edit", file_path="a.txt", old_string="a = 1", new_string="a = 100")
    second = call_tool("edit", file_path="a.txt", old_string="b = 2", new_string="b = 200")

    assert (first.status, second.status) == ("success", "success")
    assert path.read_text() == "a = 100\nb = 200\n"


def test_missing_file(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("edit", file_path="nope.txt", old_string="a", new_string="b")

    assert result.status == "error"
    assert result.error == "file not found: nope.txt"
    assert sorted(os.listdir(workspace)) == []


def test_binary_file_is_refused(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "blob.bin"
    path.write_bytes(b"abc\x00def")

    result = call_tool("edit", file_path="blob.bin", old_string="abc", new_string="xyz")

    assert result.status == "error"
    assert result.error == "blob.bin is a binary file (NUL bytes found); it has no text to show"
    assert path.read_bytes() == b"abc\x00def"


def test_leaves_no_temporary_files(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("before\n")

    result = call_tool("edit", file_path="a.txt", old_string="before", new_string="after")

    assert result.status == "success"
    assert sorted(os.listdir(workspace)) == ["a.txt"]

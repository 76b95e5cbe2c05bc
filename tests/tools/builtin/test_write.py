"""write: atomic create or replace, confirmed overwrites, the old file's style kept."""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from toolrun.permissions.approvals import Approver, AutoApprover, DenyApprover
from toolrun.tools import ToolResult

CallTool = Callable[..., ToolResult]

DENIED_REASON = (
    "needs confirmation but nobody can be asked (not interactive); pass --yes to approve"
)
deny = pytest.mark.parametrize("approver", [DenyApprover()], indirect=True, ids=["deny"])


@pytest.fixture
def approver(request: pytest.FixtureRequest) -> Approver:
    """AutoApprover unless a test asks for another through indirect parametrization."""
    chosen: Approver = getattr(request, "param", AutoApprover())
    return chosen


def entries(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def test_creates_a_new_file(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path="hello.txt", content="hello\nworld\n")

    assert result.status == "success"
    assert result.error is None
    assert result.output == {
        "file_path": "hello.txt",
        "bytes_written": 12,
        "created": True,
        "encoding": "utf-8",
        "line_ending": "LF",
    }
    assert (workspace / "hello.txt").read_bytes() == b"hello\nworld\n"
    assert "execution_time_ms" in result.metadata


def test_creates_parent_directories(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path="docs/notes/todo.md", content="# To do\n")

    assert result.status == "success"
    assert result.output["file_path"] == "docs/notes/todo.md"
    assert result.output["created"] is True
    assert (workspace / "docs" / "notes" / "todo.md").read_bytes() == b"# To do\n"


def test_absolute_path_inside_the_workspace(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path=str(workspace / "abs.txt"), content="x")

    assert result.status == "success"
    assert result.output["file_path"] == "abs.txt"
    assert (workspace / "abs.txt").read_bytes() == b"x"


def test_new_file_is_utf8_whatever_the_content(workspace: Path, call_tool: CallTool) -> None:
    text = "你好，世界\n"  # noqa: RUF001

    result = call_tool("write", file_path="zh.txt", content=text)

    assert result.status == "success"
    assert result.output["bytes_written"] == len(text.encode())
    assert (workspace / "zh.txt").read_bytes() == text.encode()


@deny
def test_new_file_needs_no_confirmation(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path="new.txt", content="fresh\n")

    assert result.status == "success"
    assert result.output["created"] is True
    assert (workspace / "new.txt").read_bytes() == b"fresh\n"


@deny
def test_overwrite_denied_leaves_the_file_unchanged(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "config.toml").write_bytes(b"debug = true\n")

    result = call_tool("write", file_path="config.toml", content="debug = false\n")

    assert result.status == "denied"
    assert result.error == f"write replaces the existing file config.toml: {DENIED_REASON}"
    assert result.output is None
    assert (workspace / "config.toml").read_bytes() == b"debug = true\n"
    assert entries(workspace) == ["config.toml"]


def test_overwrite_approved_replaces_the_file(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "config.toml").write_bytes(b"debug = true\nlevel = 3\n")

    result = call_tool("write", file_path="config.toml", content="debug = false\n")

    assert result.status == "success"
    assert result.output == {
        "file_path": "config.toml",
        "bytes_written": 14,
        "created": False,
        "encoding": "utf-8",
        "line_ending": "LF",
    }
    assert (workspace / "config.toml").read_bytes() == b"debug = false\n"


def test_overwrite_keeps_crlf_endings(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "win.txt").write_bytes(b"old one\r\nold two\r\n")

    result = call_tool("write", file_path="win.txt", content="new one\nnew two\nnew three\n")

    assert result.status == "success"
    assert result.output["line_ending"] == "CRLF"
    assert result.output["bytes_written"] == 29
    assert (workspace / "win.txt").read_bytes() == b"new one\r\nnew two\r\nnew three\r\n"


def test_overwrite_keeps_crlf_when_content_already_has_crlf(
    workspace: Path, call_tool: CallTool
) -> None:
    (workspace / "win.txt").write_bytes(b"old\r\n")

    result = call_tool("write", file_path="win.txt", content="a\r\nb\nc\r\n")

    assert result.status == "success"
    assert (workspace / "win.txt").read_bytes() == b"a\r\nb\r\nc\r\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("你好，世界\n", "你好，朋友\n"),  # noqa: RUF001
        (
            "# 配置文件说明：请勿修改以下内容。\n名称 = 旧的服务器\n",  # noqa: RUF001
            "# 配置文件说明：请勿修改以下内容。\n名称 = 新的服务器\n端口 = 8080\n",  # noqa: RUF001
        ),
    ],
    ids=["one-line", "config"],
)
def test_overwrite_keeps_gbk_encoding(
    workspace: Path, call_tool: CallTool, old: str, new: str
) -> None:
    (workspace / "zh.conf").write_bytes(old.encode("gbk"))

    result = call_tool("write", file_path="zh.conf", content=new)

    assert result.status == "success", result.error
    assert result.output["created"] is False
    assert result.output["bytes_written"] == len(new.encode("gbk"))
    assert (workspace / "zh.conf").read_bytes() == new.encode("gbk")


def test_overwrite_keeps_utf16_bom(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "u16.txt").write_bytes(codecs.BOM_UTF16_LE + "old text\r\n".encode("utf-16-le"))

    result = call_tool("write", file_path="u16.txt", content="new 内容\nline 2\n")

    expected = codecs.BOM_UTF16_LE + "new 内容\r\nline 2\r\n".encode("utf-16-le")
    assert result.status == "success"
    assert result.output["encoding"] == "utf-16-le"
    assert result.output["line_ending"] == "CRLF"
    assert result.output["bytes_written"] == len(expected)
    assert (workspace / "u16.txt").read_bytes() == expected


def test_overwrite_keeps_utf8_bom(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"old\n")

    result = call_tool("write", file_path="bom.txt", content="new\n")

    assert result.status == "success"
    assert (workspace / "bom.txt").read_bytes() == codecs.BOM_UTF8 + b"new\n"


def test_overwrite_of_a_binary_file_writes_plain_utf8(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02\xff")

    result = call_tool("write", file_path="blob.bin", content="text now\n")

    assert result.status == "success"
    assert result.output["created"] is False
    assert result.output["encoding"] == "utf-8"
    assert (workspace / "blob.bin").read_bytes() == b"text now\n"


def test_content_the_encoding_cannot_store_is_an_error(
    workspace: Path, call_tool: CallTool
) -> None:
    original = "name=José Muñoz\ncity=São Paulo\n".encode("latin-1")
    (workspace / "legacy.txt").write_bytes(original)

    result = call_tool("write", file_path="legacy.txt", content="name=张伟\n")

    assert result.status == "error"
    assert result.error is not None
    assert re.fullmatch(
        r"content has characters the file's encoding \([\w-]+\) cannot store: '张伟'",
        result.error,
    ), result.error
    assert (workspace / "legacy.txt").read_bytes() == original
    assert entries(workspace) == ["legacy.txt"]


def test_refuses_when_the_file_changed_since_it_was_read(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.txt"
    path.write_text("version 1\n")
    assert call_tool("read", file_path="a.txt").status == "success"
    path.write_text("version 2 written by someone else\n")

    result = call_tool("write", file_path="a.txt", content="agent's version\n")

    assert result.status == "error"
    assert result.error == "a.txt changed since it was last read; read it again first"
    assert path.read_text() == "version 2 written by someone else\n"
    assert entries(workspace) == ["a.txt"]


def test_refuses_when_only_the_mtime_changed(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("version 1\n")
    assert call_tool("read", file_path="a.txt").status == "success"
    path.write_text("version 2\n")  # same size
    seen = path.stat().st_mtime_ns
    os.utime(path, ns=(seen + 5_000_000_000, seen + 5_000_000_000))

    result = call_tool("write", file_path="a.txt", content="agent's version\n")

    assert result.status == "error"
    assert result.error == "a.txt changed since it was last read; read it again first"
    assert path.read_text() == "version 2\n"


def test_reading_again_after_a_change_allows_the_write(
    workspace: Path, call_tool: CallTool
) -> None:
    path = workspace / "a.txt"
    path.write_text("version 1\n")
    call_tool("read", file_path="a.txt")
    path.write_text("version 2 written by someone else\n")
    assert call_tool("write", file_path="a.txt", content="x\n").status == "error"

    assert call_tool("read", file_path="a.txt").status == "success"
    result = call_tool("write", file_path="a.txt", content="agent's version\n")

    assert result.status == "success"
    assert path.read_text() == "agent's version\n"


def test_own_writes_do_not_count_as_changes(workspace: Path, call_tool: CallTool) -> None:
    path = workspace / "a.txt"
    path.write_text("v1\n")
    call_tool("read", file_path="a.txt")

    first = call_tool("write", file_path="a.txt", content="v2 is longer\n")
    second = call_tool("write", file_path="a.txt", content="v3\n")

    assert (first.status, second.status) == ("success", "success")
    assert path.read_text() == "v3\n"


def test_unread_file_can_be_overwritten(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("never read\n")

    result = call_tool("write", file_path="a.txt", content="replaced\n")

    assert result.status == "success"
    assert (workspace / "a.txt").read_text() == "replaced\n"


def test_leaves_no_temporary_files(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "keep.txt").write_text("keep\n")

    created = call_tool("write", file_path="sub/new.txt", content="one\n")
    replaced = call_tool("write", file_path="keep.txt", content="two\n")

    assert (created.status, replaced.status) == ("success", "success")
    assert entries(workspace) == ["keep.txt", "sub"]
    assert entries(workspace / "sub") == ["new.txt"]


def test_directory_path_is_an_error(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "keep.py").write_text("x = 1\n")

    result = call_tool("write", file_path="src", content="oops\n")

    assert result.status == "error"
    assert result.error == "src is a directory, not a file"
    assert entries(workspace / "src") == ["keep.py"]


def test_workspace_root_is_an_error(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path=".", content="oops\n")

    assert result.status == "error"
    assert result.error == ". is a directory, not a file"
    assert entries(workspace) == []


def test_content_is_required(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path="a.txt")

    assert result.status == "error"
    assert result.error == "invalid arguments: missing required parameter: content"
    assert entries(workspace) == []


def test_new_file_keeps_the_callers_crlf_endings(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("write", file_path="win.txt", content="a\r\nb\r\n")

    assert result.status == "success", result.error
    assert (workspace / "win.txt").read_bytes() == b"a\r\nb\r\n"
    assert result.output["line_ending"] == "CRLF"


def test_mixed_endings_are_written_back_in_the_majority_style(
    workspace: Path, call_tool: CallTool
) -> None:
    (workspace / "mixed.txt").write_bytes(b"a\r\nb\r\nc\nd\r\n")

    result = call_tool("write", file_path="mixed.txt", content="x\ny\n")

    assert result.status == "success", result.error
    assert (workspace / "mixed.txt").read_bytes() == b"x\r\ny\r\n"


def test_mostly_lf_file_with_one_crlf_stays_lf(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "mostly.txt").write_bytes(b"a\nb\nc\r\nd\n")

    result = call_tool("write", file_path="mostly.txt", content="x\ny\n")

    assert result.status == "success", result.error
    assert (workspace / "mostly.txt").read_bytes() == b"x\ny\n"

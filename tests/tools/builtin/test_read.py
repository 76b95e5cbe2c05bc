"""read: `cat -n` pages of a text file, whatever its size, encoding or line endings."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path

import pytest

from toolrun.tools import ToolResult
from toolrun.tools.builtin.read import _number_prefixes

CallTool = Callable[..., ToolResult]


def numbered(lines: list[str], start: int = 1) -> str:
    """What `cat -n` prints for `lines`, without the final newline."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=start))


def test_output_is_cat_n_style(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("first\n  indented\n\nlast\n")

    result = call_tool("read", file_path="a.txt")

    assert result.status == "success"
    assert result.error is None
    assert result.output == {
        "content": "     1\tfirst\n     2\t  indented\n     3\t\n     4\tlast",
        "start_line": 1,
        "lines_returned": 4,
        "total_lines": 4,
        "partial": False,
        "next_offset": None,
        "encoding": "utf-8",
        "line_ending": "LF",
        "notice": None,
    }


def test_line_numbers_stay_right_aligned_past_six_digits(
    workspace: Path, call_tool: CallTool
) -> None:
    (workspace / "a.txt").write_text("".join(f"{n}\n" for n in range(1, 1_000_002)))

    result = call_tool("read", file_path="a.txt", offset=999_999, limit=3)

    assert result.output["content"] == "999999\t999999\n1000000\t1000000\n1000001\t1000001"


def test_last_line_without_newline_is_counted(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("one\ntwo")

    result = call_tool("read", file_path="a.txt")

    assert result.output["content"] == "     1\tone\n     2\ttwo"
    assert result.output["total_lines"] == 2


def test_offset_and_limit_select_a_window(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))

    result = call_tool("read", file_path="a.txt", offset=3, limit=4)

    assert result.status == "success"
    assert result.output["content"] == numbered(["line 3", "line 4", "line 5", "line 6"], 3)
    assert result.output["start_line"] == 3
    assert result.output["lines_returned"] == 4
    assert result.output["total_lines"] == 10
    assert result.output["partial"] is True
    assert result.output["next_offset"] == 7
    assert result.output["notice"] == (
        "partial: showing lines 3-6 of 10; call read with offset=7 to continue"
    )


def test_window_reaching_the_end_is_not_partial(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))

    result = call_tool("read", file_path="a.txt", offset=8, limit=50)

    assert result.output["content"] == numbered(["line 8", "line 9", "line 10"], 8)
    assert result.output["lines_returned"] == 3
    assert result.output["partial"] is False
    assert result.output["next_offset"] is None
    assert result.output["notice"] is None


def test_offset_on_the_last_line(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("a\nb\nc\n")

    result = call_tool("read", file_path="a.txt", offset=3)

    assert result.status == "success"
    assert result.output["content"] == "     3\tc"
    assert result.output["partial"] is False


def test_default_page_is_2000_lines_and_says_how_to_continue(
    workspace: Path, call_tool: CallTool
) -> None:
    lines = [f"row {n}" for n in range(1, 2501)]
    (workspace / "big.txt").write_text("\n".join(lines) + "\n")

    first = call_tool("read", file_path="big.txt")

    assert first.status == "success"
    assert first.output["content"] == numbered(lines[:2000])
    assert first.output["lines_returned"] == 2000
    assert first.output["total_lines"] == 2500
    assert first.output["partial"] is True
    assert first.output["next_offset"] == 2001
    assert first.output["notice"] == (
        "partial: showing lines 1-2000 of 2500; call read with offset=2001 to continue"
    )

    rest = call_tool("read", file_path="big.txt", offset=first.output["next_offset"])

    assert rest.output["content"] == numbered(lines[2000:], 2001)
    assert rest.output["lines_returned"] == 500
    assert rest.output["partial"] is False
    assert rest.output["next_offset"] is None
    assert rest.output["notice"] is None


def test_file_of_exactly_2000_lines_is_whole(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("x\n" * 2000)

    result = call_tool("read", file_path="a.txt")

    assert result.output["lines_returned"] == 2000
    assert result.output["partial"] is False
    assert result.output["notice"] is None


def test_lines_longer_than_2000_chars_are_cut_and_marked(
    workspace: Path, call_tool: CallTool
) -> None:
    long_line = "a" * 1990 + "b" * 10 + "TAIL" * 100
    exact = "c" * 2000
    (workspace / "a.txt").write_text(f"{long_line}\n{exact}\nshort\n")

    result = call_tool("read", file_path="a.txt")

    assert result.status == "success"
    assert result.output["content"] == (
        "     1\t" + "a" * 1990 + "b" * 10 + " … [line truncated]\n"
        "     2\t" + "c" * 2000 + "\n"
        "     3\tshort"
    )
    assert result.metadata["lines_truncated"] == 1


def test_missing_file(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("read", file_path="docs/missing.txt")

    assert result.status == "error"
    assert result.error == "file not found: docs/missing.txt"
    assert result.output is None


def test_directory_given(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "src").mkdir()

    result = call_tool("read", file_path="src")

    assert result.status == "error"
    assert result.error == "src is a directory, not a file"


def test_workspace_root_given(workspace: Path, call_tool: CallTool) -> None:
    result = call_tool("read", file_path=".")

    assert result.status == "error"
    assert result.error == ". is a directory, not a file"


def test_offset_past_the_end_says_how_many_lines(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("a\nb\nc\n")

    result = call_tool("read", file_path="a.txt", offset=4)

    assert result.status == "error"
    assert result.error == "offset 4 is past the end of a.txt, which has 3 lines"


def test_offset_below_one_is_invalid(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "a.txt").write_text("a\n")

    result = call_tool("read", file_path="a.txt", offset=0)

    assert result.status == "error"
    assert result.error == "invalid arguments: parameter 'offset' must be >= 1, got integer 0"


def test_empty_file_succeeds_with_a_notice(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "empty.txt").write_bytes(b"")

    result = call_tool("read", file_path="empty.txt")

    assert result.status == "success"
    assert result.output["content"] == ""
    assert result.output["lines_returned"] == 0
    assert result.output["total_lines"] == 0
    assert result.output["partial"] is False
    assert result.output["next_offset"] is None
    assert result.output["notice"] == "empty.txt is empty"
    assert result.metadata["file_size_bytes"] == 0


def test_binary_file_is_refused(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "image.png").write_bytes(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    )

    result = call_tool("read", file_path="image.png")

    assert result.status == "error"
    assert result.error == "image.png is a binary file (NUL bytes found); it has no text to show"


def test_crlf_file_reads_without_carriage_returns(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "win.txt").write_bytes(b"first\r\nsecond\r\nthird\r\n")

    result = call_tool("read", file_path="win.txt")

    assert result.status == "success"
    assert result.output["content"] == "     1\tfirst\n     2\tsecond\n     3\tthird"
    assert result.output["total_lines"] == 3
    assert result.output["line_ending"] == "CRLF"


def test_utf8_bom_is_not_part_of_the_text(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "bom.txt").write_bytes(codecs.BOM_UTF8 + "héllo\nwörld\n".encode())

    result = call_tool("read", file_path="bom.txt")

    assert result.status == "success"
    assert result.output["content"] == "     1\théllo\n     2\twörld"
    assert result.output["encoding"] == "utf-8"


@pytest.mark.parametrize(
    ("bom", "codec"),
    [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")],
    ids=["le", "be"],
)
def test_utf16_with_bom(workspace: Path, call_tool: CallTool, bom: bytes, codec: str) -> None:
    text = "Hello, 世界\r\nzweite Zeile: äöü\r\n"
    (workspace / "u16.txt").write_bytes(bom + text.encode(codec))

    result = call_tool("read", file_path="u16.txt")

    assert result.status == "success"
    assert result.output["content"] == "     1\tHello, 世界\n     2\tzweite Zeile: äöü"
    assert result.output["encoding"] == codec
    assert result.output["line_ending"] == "CRLF"


@pytest.mark.parametrize(
    "text",
    [
        "你好，世界\n",  # noqa: RUF001
        "日志：服务器启动成功，端口 8080\n",  # noqa: RUF001
        "中文内容\n第二行\n",
        "# 这是一个注释\nprint('你好')\n",
        "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n",  # noqa: RUF001
    ],
    ids=["greeting", "log-line", "two-short-lines", "python-comment", "poem"],
)
def test_gbk_file_is_not_garbled(workspace: Path, call_tool: CallTool, text: str) -> None:
    (workspace / "zh.txt").write_bytes(text.encode("gbk"))

    result = call_tool("read", file_path="zh.txt")

    assert result.status == "success"
    assert result.output["content"] == numbered(text.splitlines())
    assert result.output["encoding"] != "utf-8"


@pytest.mark.parametrize(
    "text",
    [
        "café naïve résumé\n",
        "name=José Muñoz\ncity=São Paulo\n",
        "Größe: 3 m², Straße, Äpfel und Öl für Müller\n",
    ],
    ids=["french", "names", "german"],
)
def test_latin1_file_is_not_garbled(workspace: Path, call_tool: CallTool, text: str) -> None:
    data = text.encode("latin-1")
    (workspace / "legacy.txt").write_bytes(data)

    result = call_tool("read", file_path="legacy.txt")

    assert result.status == "success"
    assert result.output["content"] == numbered(text.splitlines())
    assert result.output["encoding"] != "utf-8"
    assert result.metadata["file_size_bytes"] == len(data)


def test_ten_megabyte_file_returns_the_first_page(workspace: Path, call_tool: CallTool) -> None:
    count = 10 * 1024 * 1024 // 100 + 1
    lines = [f"{n:08d} " + "x" * 90 for n in range(1, count + 1)]  # 99 chars + newline
    path = workspace / "huge.log"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    assert size > 10 * 1024 * 1024

    result = call_tool("read", file_path="huge.log")

    assert result.status == "success"
    assert result.output["content"] == numbered(lines[:2000])
    assert result.output["lines_returned"] == 2000
    assert result.output["total_lines"] == count
    assert result.output["partial"] is True
    assert result.output["next_offset"] == 2001
    assert result.output["notice"] == (
        f"partial: showing lines 1-2000 of {count}; call read with offset=2001 to continue"
    )
    assert result.metadata["file_size_bytes"] == size
    assert result.metadata["total_lines"] == count
    assert result.metadata["lines_returned"] == 2000


def test_metadata(workspace: Path, call_tool: CallTool) -> None:
    data = b"alpha\nbeta\ngamma\ndelta\n"
    (workspace / "a.txt").write_bytes(data)

    result = call_tool("read", file_path="a.txt", offset=2, limit=2)

    assert set(result.metadata) >= {
        "execution_time_ms",
        "file_size_bytes",
        "total_lines",
        "lines_returned",
    }
    assert isinstance(result.metadata["execution_time_ms"], float)
    assert result.metadata["execution_time_ms"] >= 0
    assert result.metadata["file_size_bytes"] == len(data)
    assert result.metadata["total_lines"] == 4
    assert result.metadata["lines_returned"] == 2


def test_absolute_path_inside_the_workspace(workspace: Path, call_tool: CallTool) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("# Title\n")

    result = call_tool("read", file_path=str(workspace / "docs" / "a.md"))

    assert result.status == "success"
    assert result.output["content"] == "     1\t# Title"


@pytest.mark.parametrize(
    ("first", "count"),
    [(1, 5), (249_998, 5), (250_001, 3), (7, 0), (1_000_000, 2)],
    ids=["start", "across-the-cache-end", "past-the-cache", "empty", "seven-digits"],
)
def test_number_prefixes_match_cat_n_formatting(first: int, count: int) -> None:
    assert _number_prefixes(first, count) == [f"{n:>6}\t" for n in range(first, first + count)]

"""grep tool: ripgrep searches in three output modes, with filters, context and paging."""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

import pytest

from toolrun.tools import ToolResult, ToolStatus
from toolrun.tools.builtin.grep import MAX_COLUMNS

CallTool = Callable[..., ToolResult]


def make(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def grep(call_tool: CallTool, pattern: str, **arguments: Any) -> dict[str, Any]:
    result = call_tool("grep", pattern=pattern, **arguments)
    assert result.status is ToolStatus.SUCCESS, result.error
    output: dict[str, Any] = result.output
    return output


def content_lines(call_tool: CallTool, pattern: str, **arguments: Any) -> list[str]:
    text: str = grep(call_tool, pattern, output_mode="content", **arguments)["content"]
    return text.split("\n") if text else []


NUMBERED = "".join(f"line {index}\n" for index in range(1, 11))


def test_files_with_matches_is_the_default_and_sorted(workspace: Path, call_tool: CallTool) -> None:
    make(
        workspace,
        {"z.txt": "needle\n", "a.txt": "needle\n", "m/b.txt": "hay needle\n", "n.txt": "hay\n"},
    )

    output = grep(call_tool, "needle")

    assert output["mode"] == "files_with_matches"
    assert output["files"] == ["a.txt", "m/b.txt", "z.txt"]
    assert output["returned"] == 3
    assert output["total"] == 3
    assert output["truncated"] is False


def test_content_mode_gives_path_line_text(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"b.py": "x = 1\nneedle = 2\n", "a.py": "needle\nother\nneedle again\n"})

    output = grep(call_tool, "needle", output_mode="content")

    assert output["content"] == "a.py:1:needle\na.py:3:needle again\nb.py:2:needle = 2"
    assert output["returned"] == 3


def test_count_mode_gives_matching_lines_per_file(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "x\nx\nx\ny\n", "sub/b.txt": "x\n", "c.txt": "y\n"})

    output = grep(call_tool, "x", output_mode="count")

    assert output["counts"] == [{"path": "a.txt", "count": 3}, {"path": "sub/b.txt", "count": 1}]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("-A", ["n.txt:5:line 5", "n.txt-6-line 6", "n.txt-7-line 7"]),
        ("-B", ["n.txt-3-line 3", "n.txt-4-line 4", "n.txt:5:line 5"]),
    ],
)
def test_context_after_and_before(
    workspace: Path, call_tool: CallTool, flag: str, expected: list[str]
) -> None:
    make(workspace, {"n.txt": NUMBERED})

    assert content_lines(call_tool, "^line 5$", **{flag: 2}) == expected


def test_context_on_both_sides_and_group_separator(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"n.txt": NUMBERED})

    assert content_lines(call_tool, "^line (2|8)$", **{"-C": 1}) == [
        "n.txt-1-line 1",
        "n.txt:2:line 2",
        "n.txt-3-line 3",
        "--",
        "n.txt-7-line 7",
        "n.txt:8:line 8",
        "n.txt-9-line 9",
    ]


def test_context_is_ignored_outside_content_mode(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"n.txt": NUMBERED})

    output = grep(call_tool, "^line 5$", output_mode="count", **{"-C": 3})

    assert output["counts"] == [{"path": "n.txt", "count": 1}]


def test_ignore_case(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "Needle\nNEEDLE\nneedle\nhay\n"})

    assert content_lines(call_tool, "needle") == ["a.txt:3:needle"]
    assert content_lines(call_tool, "needle", **{"-i": True}) == [
        "a.txt:1:Needle",
        "a.txt:2:NEEDLE",
        "a.txt:3:needle",
    ]


def test_line_numbers_can_be_turned_off(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "hay\nneedle\n"})

    assert content_lines(call_tool, "needle", **{"-n": False}) == ["a.txt:needle"]


def test_multiline_lets_a_match_span_lines(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.py": "def f(\n    x,\n):\n    pass\n", "b.py": "def g(): pass\n"})

    assert content_lines(call_tool, r"def f\(.*\):", multiline=True) == [
        "a.py:1:def f(",
        "a.py:2:    x,",
        "a.py:3:):",
    ]
    assert grep(call_tool, r"def f\(.*\):")["files"] == []


def test_glob_filter(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.py": "needle\n", "b.txt": "needle\n", "src/c.py": "needle\n"})

    assert grep(call_tool, "needle", glob="*.py")["files"] == ["a.py", "src/c.py"]
    assert grep(call_tool, "needle", glob="*.txt")["files"] == ["b.txt"]


def test_type_filter(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.py": "needle\n", "b.rs": "needle\n", "c.md": "needle\n"})

    assert grep(call_tool, "needle", type="py")["files"] == ["a.py"]
    assert grep(call_tool, "needle", type="rust")["files"] == ["b.rs"]


def test_head_limit_and_offset_page_through_files(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {f"f{index:02}.txt": "needle\n" for index in range(10)})
    everything = grep(call_tool, "needle")["files"]

    pages = [grep(call_tool, "needle", head_limit=4, offset=start) for start in (0, 4, 8)]

    assert pages[0]["files"] == ["f00.txt", "f01.txt", "f02.txt", "f03.txt"]
    assert pages[1]["files"] == ["f04.txt", "f05.txt", "f06.txt", "f07.txt"]
    assert pages[2]["files"] == ["f08.txt", "f09.txt"]
    assert [page["truncated"] for page in pages] == [True, True, False]
    assert all(page["total"] == 10 for page in pages)
    assert [page["returned"] for page in pages] == [4, 4, 2]
    assert list(chain.from_iterable(page["files"] for page in pages)) == everything


def test_content_paging_is_stable_across_calls(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {f"d{index % 3}/f{index}.txt": "needle\nhay\nneedle\n" for index in range(12)})
    everything = content_lines(call_tool, "needle")
    assert len(everything) == 24

    first = [content_lines(call_tool, "needle", head_limit=5, offset=start) for start in (0, 5, 10)]
    again = [content_lines(call_tool, "needle", head_limit=5, offset=start) for start in (0, 5, 10)]

    assert first == again
    paged = list(chain.from_iterable(first))
    assert paged == everything[:15]
    assert paged + content_lines(call_tool, "needle", offset=15) == everything


def test_count_mode_pages_too(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {f"f{index}.txt": "x\n" * (index + 1) for index in range(5)})

    output = grep(call_tool, "x", output_mode="count", head_limit=2, offset=1)

    assert output["counts"] == [{"path": "f1.txt", "count": 2}, {"path": "f2.txt", "count": 3}]
    assert output["total"] == 5
    assert output["truncated"] is True


def test_offset_past_the_end_returns_nothing(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "needle\n"})

    output = grep(call_tool, "needle", offset=5)

    assert output["files"] == []
    assert output["returned"] == 0
    assert output["total"] == 1


def test_pattern_starting_with_a_dash_is_a_pattern(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "foo\n-foo\n--files\n"})

    assert content_lines(call_tool, "-foo") == ["a.txt:2:-foo"]
    assert content_lines(call_tool, "--files") == ["a.txt:3:--files"]


def test_no_match_is_success_with_empty_results(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "hay\n"})

    assert grep(call_tool, "needle")["files"] == []
    assert grep(call_tool, "needle", output_mode="content")["content"] == ""
    assert grep(call_tool, "needle", output_mode="count")["counts"] == []
    assert grep(call_tool, "needle")["total"] == 0


def test_invalid_regex_is_an_error_with_a_clear_message(
    workspace: Path, call_tool: CallTool
) -> None:
    make(workspace, {"a.txt": "(\n"})

    result = call_tool("grep", pattern="(unclosed")

    assert result.status is ToolStatus.ERROR
    error = result.error or ""
    assert "regex parse error" in error
    assert "unclosed group" in error
    assert "Traceback" not in error


def test_unknown_type_is_an_error(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"a.txt": "needle\n"})

    result = call_tool("grep", pattern="needle", type="no-such-type")

    assert result.status is ToolStatus.ERROR
    assert "unrecognized file type: no-such-type" in (result.error or "")


def test_gitignore_is_respected(workspace: Path, call_tool: CallTool) -> None:
    make(
        workspace,
        {
            ".gitignore": "build/\n*.log\n",
            "src.txt": "needle\n",
            "build/out.txt": "needle\n",
            "run.log": "needle\n",
        },
    )

    assert grep(call_tool, "needle")["files"] == ["src.txt"]


def test_long_lines_are_capped_to_a_preview(workspace: Path, call_tool: CallTool) -> None:
    long_line = "needle " + "x" * 5000
    make(workspace, {"a.txt": f"{long_line}\nneedle short\n"})

    lines = content_lines(call_tool, "needle")

    assert len(lines) == 2
    assert lines[0].startswith("a.txt:1:needle xxx")
    assert "omitted end of long line" in lines[0]
    assert len(lines[0]) < MAX_COLUMNS + 100
    assert lines[1] == "a.txt:2:needle short"


def test_single_file_as_path(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"src/a.py": "needle\nhay\nneedle\n", "src/b.py": "needle\n"})

    assert grep(call_tool, "needle", path="src/a.py")["files"] == ["src/a.py"]
    assert content_lines(call_tool, "needle", path="src/a.py") == [
        "src/a.py:1:needle",
        "src/a.py:3:needle",
    ]
    counts = grep(call_tool, "needle", path="src/a.py", output_mode="count")["counts"]
    assert counts == [{"path": "src/a.py", "count": 2}]


def test_directory_as_path(workspace: Path, call_tool: CallTool) -> None:
    make(workspace, {"src/a.py": "needle\n", "lib/b.py": "needle\n"})

    assert grep(call_tool, "needle", path="src")["files"] == ["src/a.py"]


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("nowhere", ToolStatus.ERROR, "path not found: nowhere"),
        ("../outside", ToolStatus.BLOCKED, "outside the workspace"),
    ],
)
def test_unusable_path_is_refused(
    call_tool: CallTool, path: str, status: ToolStatus, message: str
) -> None:
    result = call_tool("grep", pattern="secret", path=path)

    assert result.status is status
    assert message in (result.error or "")

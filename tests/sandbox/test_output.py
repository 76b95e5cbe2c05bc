"""Output sinks: CappedLines keeps head and tail lines, BoundedBytes keeps a prefix."""

from __future__ import annotations

import pytest

from toolrun.sandbox.output import LINE_CUT_MARK, BoundedBytes, CappedLines


def numbered(count: int) -> bytes:
    return "".join(f"{index}\n" for index in range(1, count + 1)).encode()


def capped(head: int = 3, tail: int = 2, max_line_chars: int = 100) -> CappedLines:
    return CappedLines(head=head, tail=tail, max_line_chars=max_line_chars)


def test_short_output_is_kept_whole() -> None:
    sink = capped()
    sink.feed(b"one\ntwo\n")

    assert sink.text() == "one\ntwo"
    assert sink.total_lines == 2
    assert sink.omitted_lines == 0


def test_empty_output_is_empty_text() -> None:
    sink = capped()

    assert sink.text() == ""
    assert sink.total_lines == 0


def test_exactly_head_plus_tail_lines_has_no_marker() -> None:
    sink = capped(head=3, tail=2)
    sink.feed(numbered(5))

    assert sink.text() == "1\n2\n3\n4\n5"
    assert sink.omitted_lines == 0


def test_head_and_tail_are_kept_and_the_middle_counted() -> None:
    sink = capped(head=3, tail=2)
    sink.feed(numbered(100))

    assert sink.text() == "1\n2\n3\n[95 lines omitted]\n99\n100"
    assert sink.total_lines == 100
    assert sink.omitted_lines == 95


def test_one_line_over_the_cap_is_counted() -> None:
    sink = capped(head=3, tail=2)
    sink.feed(numbered(6))

    assert sink.text() == "1\n2\n3\n[1 lines omitted]\n5\n6"


def test_chunk_boundaries_do_not_matter() -> None:
    data = numbered(1000) + b"last line without newline"
    whole = capped(head=4, tail=4)
    whole.feed(data)
    bytewise = capped(head=4, tail=4)
    for index in range(len(data)):
        bytewise.feed(data[index : index + 1])

    assert bytewise.text() == whole.text()
    assert bytewise.total_lines == whole.total_lines == 1001


def test_partial_last_line_without_newline_is_kept() -> None:
    sink = capped()
    sink.feed(b"first\nsecond")

    assert sink.text() == "first\nsecond"
    assert sink.total_lines == 2


def test_partial_last_line_lands_in_the_tail() -> None:
    sink = capped(head=1, tail=1)
    sink.feed(b"1\n2\n3\nend")

    assert sink.text() == "1\n[2 lines omitted]\nend"


def test_text_can_be_read_twice() -> None:
    sink = capped()
    sink.feed(b"a\nb")

    assert sink.text() == sink.text() == "a\nb"
    assert sink.total_lines == 2


def test_blank_lines_are_lines() -> None:
    sink = capped()
    sink.feed(b"\n\nx\n")

    assert sink.text() == "\n\nx"
    assert sink.total_lines == 3


def test_long_line_is_cut_with_a_mark() -> None:
    sink = capped(max_line_chars=10)
    sink.feed(b"x" * 50 + b"\nshort\n")

    assert sink.text() == "x" * 10 + LINE_CUT_MARK + "\nshort"
    assert sink.total_lines == 2


def test_line_at_the_limit_is_not_cut() -> None:
    sink = capped(max_line_chars=10)
    sink.feed(b"y" * 10 + b"\n")

    assert sink.text() == "y" * 10


def test_huge_line_fed_in_pieces_is_cut_once() -> None:
    sink = capped(max_line_chars=10)
    for _ in range(1000):
        sink.feed(b"z" * 1000)
    sink.feed(b"\nafter\n")

    assert sink.text() == "z" * 10 + LINE_CUT_MARK + "\nafter"
    assert sink.total_lines == 2


def test_long_partial_last_line_is_cut() -> None:
    sink = capped(max_line_chars=5)
    sink.feed(b"abcdefghij")

    assert sink.text() == "abcde" + LINE_CUT_MARK


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("éé", "éé"),  # four bytes but two characters: within a three-character limit
        ("ééééé", "ééé" + LINE_CUT_MARK),
    ],
)
def test_line_limit_counts_characters_not_bytes(line: str, expected: str) -> None:
    sink = capped(max_line_chars=3)
    sink.feed(line.encode() + b"\n")

    assert sink.text() == expected


def test_invalid_utf8_is_replaced_not_raised() -> None:
    sink = capped()
    sink.feed(b"ok \xff\xfe end\n")

    assert sink.text() == "ok \ufffd\ufffd end"


@pytest.mark.parametrize(
    ("cap", "chunks", "kept", "truncated"),
    [
        pytest.param(10, [b"abc", b"defg"], b"abcdefg", False, id="under-the-cap"),
        pytest.param(4, [b"ab", b"cd"], b"abcd", False, id="exactly-at-the-cap"),
        pytest.param(5, [b"abc", b"defgh", b"ijk"], b"abcde", True, id="over-the-cap"),
        pytest.param(3, [b"0123456789"], b"012", True, id="one-oversized-chunk"),
        pytest.param(3, [], b"", False, id="nothing-fed"),
    ],
)
def test_bounded_bytes_keeps_a_prefix_and_flags_truncation(
    cap: int, chunks: list[bytes], kept: bytes, truncated: bool
) -> None:
    sink = BoundedBytes(cap)
    for chunk in chunks:
        sink.feed(chunk)

    assert sink.data() == kept
    assert sink.truncated is truncated

"""Bounded capture of subprocess output: head and tail kept, the middle counted."""

from __future__ import annotations

from collections import deque
from typing import Protocol

LINE_CUT_MARK = " … [line truncated]"


class OutputSink(Protocol):
    """Receives a stream's bytes as they arrive."""

    def feed(self, chunk: bytes) -> None: ...


class CappedLines:
    """Keeps the first `head` and last `tail` lines; the error is usually at the end."""

    def __init__(self, *, head: int, tail: int, max_line_chars: int) -> None:
        self._head: list[tuple[bytes, bool]] = []
        self._tail: deque[tuple[bytes, bool]] = deque(maxlen=tail)
        self._head_size = head
        self._max_line_chars = max_line_chars
        self._max_line_bytes = max_line_chars * 4
        self._partial = bytearray()
        self._partial_cut = False
        self.total_lines = 0

    def feed(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._extend_partial(chunk[start:end])
            self._push(bytes(self._partial))
            self._partial.clear()
            self._partial_cut = False
            start = end + 1
        self._extend_partial(chunk[start:])

    def _extend_partial(self, piece: bytes) -> None:
        room = self._max_line_bytes - len(self._partial)
        if len(piece) > room:
            piece = piece[: max(room, 0)]
            self._partial_cut = True
        self._partial += piece

    def _push(self, line: bytes) -> None:
        entry = (line, self._partial_cut)
        self.total_lines += 1
        if len(self._head) < self._head_size:
            self._head.append(entry)
        else:
            self._tail.append(entry)

    @property
    def omitted_lines(self) -> int:
        return self.total_lines - len(self._head) - len(self._tail)

    def text(self) -> str:
        """The captured text, with "[N lines omitted]" where the middle was dropped."""
        if self._partial:
            self._push(bytes(self._partial))
            self._partial.clear()
            self._partial_cut = False
        lines = [self._decode(*entry) for entry in self._head]
        if self.omitted_lines:
            lines.append(f"[{self.omitted_lines} lines omitted]")
        lines.extend(self._decode(*entry) for entry in self._tail)
        return "\n".join(lines)

    def _decode(self, line: bytes, cut: bool) -> str:
        text = line.decode("utf-8", errors="replace")
        if cut or len(text) > self._max_line_chars:
            return text[: self._max_line_chars] + LINE_CUT_MARK
        return text


class BoundedBytes:
    """Collects raw bytes up to a cap; `truncated` tells whether the cap was hit."""

    def __init__(self, max_bytes: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._max_bytes = max_bytes
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        room = self._max_bytes - self._size
        if len(chunk) > room:
            chunk = chunk[:room]
            self.truncated = True
        self._chunks.append(chunk)
        self._size += len(chunk)

    def data(self) -> bytes:
        return b"".join(self._chunks)

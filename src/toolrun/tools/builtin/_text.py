"""Text files as agents see them: decoded by BOM, UTF-8 or detection; endings remembered."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from toolrun.errors import ToolExecutionError

_BOMS = (  # UTF-32 first: its little-endian BOM starts with UTF-16's.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BINARY_PROBE_BYTES = 8192
_DETECTION_SAMPLE_BYTES = 1 << 20
# Unrestricted detection calls short GBK text Korean and Latin-1 text Central European;
# these are the legacy encodings agents' files actually come in.
_LEGACY_ENCODINGS = ["gb18030", "big5", "shift_jis", "cp1252"]


@dataclass(frozen=True)
class TextFile:
    """Decoded content plus what is needed to write it back the same way."""

    text: str
    encoding: str = "utf-8"
    bom: bytes = b""
    # None: text is written exactly as given (a new file takes the caller's line endings).
    newline: str | None = "\n"

    @property
    def normalized(self) -> str:
        """The text with CRLF turned into LF, the form tools match and count lines on."""
        return self.text.replace("\r\n", "\n")

    @property
    def line_ending(self) -> str:
        """ "CRLF" or "LF": the style this file is written in."""
        newline = _newline_of(self.text) if self.newline is None else self.newline
        return "CRLF" if newline == "\r\n" else "LF"

    def encode(self, text: str) -> bytes:
        """Bytes for `text` in this file's encoding, BOM and line endings.

        Raises:
            ToolExecutionError: the text has characters the encoding cannot represent.
        """
        if self.newline is not None:
            text = text.replace("\r\n", "\n")
            if self.newline == "\r\n":
                text = text.replace("\n", "\r\n")
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise ToolExecutionError(
                f"content has characters the file's encoding ({self.encoding}) cannot store: "
                f"{exc.object[exc.start : exc.end]!r}"
            ) from exc


def decode(data: bytes, name: str) -> TextFile:
    """Decode file bytes: BOM first, then strict UTF-8, then charset detection.

    Raises:
        ToolExecutionError: the file is binary (NUL bytes in its head).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(encoding, errors="replace")
            return TextFile(text, encoding, bom, _newline_of(text))
    if is_binary(data):
        raise ToolExecutionError(
            f"{name} is a binary file (NUL bytes found); it has no text to show"
        )
    try:
        text = data.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        encoding = _detect(data)
        text = data.decode(encoding, errors="replace")
    return TextFile(text, encoding, b"", _newline_of(text))


def is_binary(data: bytes) -> bool:
    """True when the head holds NUL bytes and no BOM explains them (UTF-16/32 text)."""
    if any(data.startswith(bom) for bom, _ in _BOMS):
        return False
    return b"\x00" in data[:_BINARY_PROBE_BYTES]


def _detect(data: bytes) -> str:
    # Slow to import, and needed only for the rare file that is neither UTF-8 nor BOM'd.
    from charset_normalizer import from_bytes  # noqa: PLC0415

    best = from_bytes(data[:_DETECTION_SAMPLE_BYTES], cp_isolation=_LEGACY_ENCODINGS).best()
    return codecs.lookup(best.encoding).name if best is not None else "latin-1"


def _newline_of(text: str) -> str:
    """The majority line ending; a file with mixed endings is written back in it."""
    if "\r" not in text:  # the common case, found at memchr speed
        return "\n"
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"

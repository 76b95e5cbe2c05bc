"""One interactive program on a pseudo-terminal: what it printed since the last read, its
screen as a terminal would show it (pyte), keys sent to it, and waits for its output.

pexpect and pyte are imported by a session: the terminal tool's descriptor reads KEYS
from here in every process that loads the registry."""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable

MAX_UNREAD_CHARS = 256 * 1024  # older unread output is dropped, and that is said
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
KEYS = {
    "enter": "\r",
    "tab": "\t",
    "escape": "\x1b",
    "backspace": "\x7f",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "home": "\x1b[H",
    "end": "\x1b[F",
    "ctrl-c": "\x03",
    "ctrl-d": "\x04",
    "ctrl-z": "\x1a",
    "ctrl-l": "\x0c",
}


class TerminalSession:
    """A program started on a pty; a reader thread keeps its output and screen current."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        cols: int,
        rows: int,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        import pexpect
        import pyte

        self.started = self.last_used = time.monotonic()

        def prepare_child() -> None:
            # A host started in the background inherits SIGINT/SIGQUIT ignored; a program
            # on a terminal must feel Ctrl-C.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGQUIT, signal.SIG_DFL)
            if preexec is not None:
                preexec()

        self.child = pexpect.spawn(
            argv[0],
            argv[1:],
            cwd=cwd,
            env=env,
            dimensions=(rows, cols),
            encoding="utf-8",
            codec_errors="replace",
            preexec_fn=prepare_child,
            echo=True,
        )
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before each send otherwise
        self.screen = pyte.Screen(cols, rows)
        self._stream = pyte.Stream(self.screen)
        self._unread: list[str] = []
        self._unread_chars = 0
        self.dropped_chars = 0
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return bool(self.child.isalive())

    @property
    def exit_code(self) -> int | None:
        if self.alive:
            return None
        status = self.child.exitstatus
        return (
            -int(self.child.signalstatus) if status is None and self.child.signalstatus else status
        )

    def send(self, text: str) -> None:
        self.last_used = time.monotonic()
        self.child.send(text)

    def take(self) -> tuple[str, int]:
        """Output since the last take, escape sequences removed, and how much was dropped."""
        self.last_used = time.monotonic()
        with self._changed:
            text, dropped = "".join(self._unread), self.dropped_chars
            self._unread, self._unread_chars, self.dropped_chars = [], 0, 0
        return _ANSI.sub("", text).replace("\r\n", "\n"), dropped

    def wait_for(self, pattern: re.Pattern[str], timeout_s: float) -> bool:
        """Wait until the unread output matches `pattern` (True), the program ends or
        `timeout_s` passes (False)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not pattern.search(_ANSI.sub("", "".join(self._unread)).replace("\r\n", "\n")):
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    return False
                self._changed.wait(min(left, 0.5))
        return True

    def rendered(self) -> list[str]:
        """The screen's lines as a terminal shows them now (trailing blanks cut)."""
        with self._changed:
            lines = [line.rstrip() for line in self.screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def resize(self, cols: int, rows: int) -> None:
        with self._changed:
            self.child.setwinsize(rows, cols)
            self.screen.resize(rows, cols)

    def close(self) -> None:
        """Hang up; the program and its process group are killed if they linger."""
        self.child.close(force=True)

    def _read(self) -> None:
        import pexpect

        while True:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=None)
            except (pexpect.EOF, pexpect.TIMEOUT, OSError, ValueError):
                break
            with self._changed:
                self._stream.feed(chunk)
                self._unread.append(chunk)
                self._unread_chars += len(chunk)
                while self._unread_chars > MAX_UNREAD_CHARS and len(self._unread) > 1:
                    old = self._unread.pop(0)
                    self._unread_chars -= len(old)
                    self.dropped_chars += len(old)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

"""The worker's side of the warm launcher (`jail/zygote.py`): one small process per worker
process, started on first use, that forks jailed commands so the worker need not."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
from collections.abc import Sequence

from toolrun.errors import SandboxViolation
from toolrun.sandbox.jail import launch
from toolrun.sandbox.jail.plan import JailPlan

_STATUS = struct.Struct("i")
_ANSWER_BYTES = 65536
_ANSWER_TIMEOUT_S = 30.0


class JailedProcess:
    """A command the warm launcher started: its keeper's pid (its process group) and how
    it ended, read from the status pipe the keeper writes."""

    def __init__(self, pid: int, status_fd: int, report_fd: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._status_fd = status_fd
        self._report_fd = report_fd
        self._closed = False
        self._reported: str | None = None

    def wait(self, timeout: float | None = None) -> int:
        """The command's exit code (-N: killed by signal N).

        Raises:
            subprocess.TimeoutExpired: it has not ended within `timeout`.
        """
        if self.returncode is not None:
            return self.returncode
        poller = select.poll()
        poller.register(self._status_fd, select.POLLIN)
        if not poller.poll(None if timeout is None else timeout * 1000):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        data = os.read(self._status_fd, _STATUS.size)
        if len(data) == _STATUS.size:
            self.returncode = os.waitstatus_to_exitcode(_STATUS.unpack(data)[0])
        else:  # the keeper was killed before it could say (the call's end, a timeout)
            self.returncode = -signal.SIGKILL
        return self.returncode

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.wait(0)
        return None

    def failure(self) -> str | None:
        """Why the command could not start (the jail, or exec), once it has ended."""
        if self._closed:
            return self._reported
        os.set_blocking(self._report_fd, False)
        try:
            said = os.read(self._report_fd, 4096).decode(errors="replace")
        except BlockingIOError:
            return None
        return said or None

    def close(self) -> None:
        """Release the pipes (what the report said stays known)."""
        if self._closed:
            return
        self._reported = self.failure()
        self._closed = True
        for fd in (self._status_fd, self._report_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class WarmLauncher:
    """This process's launcher; a forked child of this process starts its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        os.register_at_fork(after_in_child=self._forget)

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        plan: JailPlan,
        stdio: tuple[int, int, int],
        pass_fds: Sequence[int] = (),
    ) -> JailedProcess:
        """Start `argv` in `plan`'s jail with `stdio` as its descriptors 0, 1 and 2 and each
        of `pass_fds` under its own number.

        Raises:
            SandboxViolation: the launcher could not be started or reached.
        """
        status_read, status_write = os.pipe()
        report_read, report_write = os.pipe()
        body = _body(
            {
                "argv": list(argv),
                "env": env,
                "plan": plan.to_json(),
                "pass_fds": list(pass_fds),
            }
        )
        try:
            answer = self._ask([body, *stdio, status_write, report_write, *pass_fds])
        except BaseException:
            for fd in (status_read, report_read):
                os.close(fd)
            raise
        finally:
            for fd in (body, status_write, report_write):
                os.close(fd)
        if "pid" not in answer:
            os.close(status_read)
            os.close(report_read)
            raise SandboxViolation(f"the warm launcher refused: {answer.get('error')}")
        return JailedProcess(int(str(answer["pid"])), status_read, report_read)

    def _ask(self, fds: list[int]) -> dict[str, object]:
        """One request, one answer. A launcher that cannot take the request is started
        again, once; one that took it but did not answer is never asked again (its answer
        could come late, to the next request)."""
        with self._lock:
            for attempt in (1, 2):
                sock = self._connected()
                try:
                    socket.send_fds(sock, [b"run"], fds)
                except OSError as exc:
                    self._stop()
                    if attempt == 2:
                        raise SandboxViolation(f"the warm launcher is gone: {exc}") from exc
                    continue
                try:
                    answer = sock.recv(_ANSWER_BYTES)
                except BaseException:
                    self._stop()
                    raise
                if not answer:
                    self._stop()
                    raise SandboxViolation("the warm launcher closed without an answer")
                found: dict[str, object] = json.loads(answer)
                return found
        raise AssertionError("unreachable")

    def _connected(self) -> socket.socket:
        if self._socket is None:
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                self._process = subprocess.Popen(
                    [*launch.command_prefix(), "--zygote", str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError as exc:
                mine.close()
                raise SandboxViolation(f"cannot start the warm launcher: {exc}") from exc
            finally:
                theirs.close()
            mine.settimeout(_ANSWER_TIMEOUT_S)  # a launcher that hangs is replaced
            self._socket = mine
        return self._socket

    def _stop(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._process is not None:
            with contextlib.suppress(OSError):
                self._process.kill()
            self._process.wait()
            self._process = None

    def _forget(self) -> None:
        """In a forked child: the parent's launcher is the parent's."""
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
        self._socket = None
        self._process = None
        self._lock = threading.Lock()


def _body(request: dict[str, object]) -> int:
    """The request in a memory file: no message size limit (a long heredoc in argv)."""
    fd = os.memfd_create("toolrun-request", os.MFD_CLOEXEC)
    data = json.dumps(request, ensure_ascii=False).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


LAUNCHER = WarmLauncher()
"""This process's warm launcher (a module global: one per process, across runners)."""

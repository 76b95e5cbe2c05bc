"""The warm launcher: a small process that starts jailed commands for one worker process.

A worker process is large (Celery, the registry, the tools): every fork of it copies its
page tables, and the jail forks twice more. This process holds the standard library and
the jail only, so its forks cost a fraction of that. It serves one request per message on
a SOCK_SEQPACKET socket: descriptors attached — a memory file holding a JSON object
(argv, env, plan, the fd numbers the command must see), stdin,
stdout, stderr, a status pipe, a report pipe, then the passed ones; it answers with the
keeper's pid. The keeper
writes the command's wait status to the status pipe; failures go to the report pipe. It
exits when the worker process closes its end.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

from toolrun.sandbox.jail.confine import JailError, enter
from toolrun.sandbox.jail.plan import JailPlan

MAX_MESSAGE = 1 << 20
MAX_FDS = 64
CANNOT_ISOLATE = 126
CANNOT_EXEC = 127
_FIXED_FDS = 5  # stdin, stdout, stderr, status, report


def serve(sock: socket.socket) -> None:
    """Answer requests until the worker closes its end."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
        except OSError:
            return
        if not data:
            return
        answer: dict[str, object]
        try:
            if not fds:
                raise ValueError("a request comes with its descriptors")
            body = fds.pop(0)
            with open(body, "rb", closefd=True) as request:
                answer = {"pid": _start(json.loads(request.read()), fds, sock)}
        except (ValueError, KeyError, OSError) as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        sock.send(json.dumps(answer).encode())


def _start(request: dict[str, object], fds: list[int], sock: socket.socket) -> int:
    plan = JailPlan.from_json(str(request["plan"]))
    argv = [str(part) for part in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    targets = [0, 1, 2, *(int(fd) for fd in request["pass_fds"])]  # type: ignore[attr-defined]
    if len(fds) != _FIXED_FDS + len(targets) - 3:
        raise ValueError(f"expected {_FIXED_FDS + len(targets) - 3} descriptors, got {len(fds)}")
    pid = os.fork()
    if pid == 0:
        try:
            _keeper(plan, argv, env, fds, targets, sock)
        except BaseException as exc:  # before the jail was entered: say why
            with contextlib.suppress(OSError):
                os.write(fds[4], f"cannot prepare the jail: {exc}".encode(errors="replace"))
        finally:
            os._exit(CANNOT_ISOLATE)
    return pid


def _keeper(
    plan: JailPlan,
    argv: list[str],
    env: dict[str, str],
    fds: list[int],
    targets: list[int],
    sock: socket.socket,
) -> None:
    """The request's keeper: its own session, the descriptors where the command expects
    them, then the jail (which joins the call's cgroups first) and the command. Never
    returns."""
    sock.close()
    # Python ignores SIGPIPE and SIGXFSZ, this process SIGCHLD: the command gets defaults.
    for ignored in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
        signal.signal(ignored, signal.SIG_DFL)
    os.setsid()
    given = [fds[0], fds[1], fds[2], *fds[_FIXED_FDS:]]
    # Above every number in play first, so that placing one cannot overwrite another.
    high = max([*fds, *targets]) + 1
    status = os.dup2(fds[3], high, inheritable=False)
    report = os.dup2(fds[4], high + 1, inheritable=False)
    moved = [os.dup2(fd, high + 2 + index) for index, fd in enumerate(given)]
    for fd, target in zip(moved, targets, strict=True):
        os.dup2(fd, target, inheritable=True)
    try:
        enter(plan, report_fd=report, status_fd=status)
    except JailError:
        os._exit(CANNOT_ISOLATE)
    for fd in range(3, high + 2 + len(moved)):  # the command keeps its own descriptors only
        if fd not in targets and fd != report:
            with contextlib.suppress(OSError):
                os.close(fd)
    try:
        os.execvpe(argv[0], argv, env)  # noqa: S606 - argv list, never a shell
    except OSError as exc:
        os.write(report, str(exc.strerror).encode())
    os._exit(CANNOT_EXEC)


def main(fd: int) -> int:
    serve(socket.socket(fileno=fd))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))

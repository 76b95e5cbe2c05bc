"""Entering a jail between fork and exec.

`enter` runs in the child a spawner forked (subprocess's preexec_fn, pexpect's, or the
launcher script) and turns it into three processes:

    keeper (the spawner's child)  new user namespace (+ network namespace); waits, then
      │                            exits as the command did, so the spawner sees its status
      └─ init (PID 1)              new mount, PID, IPC and UTS namespaces: builds the view,
           │                       pivots into it, reaps; when it ends the kernel kills
           │                       every process left in the namespace
           └─ command (PID 2)      `enter` returns here, locked down, and the spawner execs

The command's process has no capabilities (bounding and ambient sets emptied, a uid
other than 0 inside), no new privileges, a Landlock domain allowing the view's paths
only, and a seccomp filter. Any failure raises `JailError`, so the command never runs
unconfined: the spawner reports the exception and exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import struct

from toolrun.sandbox.jail import forwarder, kernel, landlock, mounts, seccomp
from toolrun.sandbox.jail.plan import NETWORK_HOST, NETWORK_PROXY, JailPlan, View

HOSTNAME = "toolrun"
_STATUS = struct.Struct("i")
_libc = ctypes.CDLL(None, use_errno=True)
_SIG_IGN = 1
_SIG_DFL = 0
_MAX_FD = 1 << 20  # closerange is one close_range call, whatever the bound
_PARENT_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


class JailError(Exception):
    """The jail could not be made; the command was not run."""


def enter(plan: JailPlan, report_fd: int | None = None, status_fd: int | None = None) -> None:
    """Confine this (just forked, single-threaded) process as `plan` says; returns only in
    the process that is to exec the command.

    The keeper writes the command's wait status to `status_fd` (4 bytes, native order) as
    soon as the command ends, before the namespaces are torn down: a waiter reading it
    need not wait for that.

    Raises:
        JailError: a step failed (also written to `report_fd`, when given).
    """
    try:
        _enter(plan, status_fd)
    except (OSError, ValueError) as exc:
        message = f"cannot confine the command: {_describe(exc)}"
        if report_fd is not None:
            with contextlib.suppress(OSError):
                os.write(report_fd, message.encode(errors="replace"))
        raise JailError(message) from exc


def _describe(exc: Exception) -> str:
    """An error as one line with no errno number: "mount proc on /proc: Permission denied"."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return str(exc)


def _enter(plan: JailPlan, status_fd: int | None) -> None:
    for procs in plan.join:  # the call's cgroups, while this process may still write them
        with open(procs, "w") as joined:
            joined.write("0")
    outside_uid, outside_gid = os.geteuid(), os.getegid()
    inside = (plan.view.uid, plan.view.gid) if plan.view else (outside_uid, outside_gid)
    kernel.unshare(
        kernel.CLONE_NEWUSER | (0 if plan.network == NETWORK_HOST else kernel.CLONE_NEWNET)
    )
    kernel.map_ids(*inside, outside_uid, outside_gid)
    if plan.network != NETWORK_HOST:
        kernel.loopback_up()
    if plan.network == NETWORK_PROXY and plan.proxy_socket is not None:
        # Forked before the mount namespace: it keeps the host's view of the proxy socket.
        forwarder.start(plan.proxy_socket)
    kernel.unshare(
        kernel.CLONE_NEWNS | kernel.CLONE_NEWPID | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS
    )
    kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE, None)
    status_read, status_write = os.pipe()
    init = os.fork()
    if init:
        os.close(status_write)
        _keep(init, status_read, status_fd)
    os.close(status_read)
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
    if _reader_gone(status_write):  # the keeper died before the line above took effect
        os._exit(1)
    _build(plan.view, plan.hidden)
    kernel.sethostname(HOSTNAME)
    kernel.prctl(kernel.PR_SET_DUMPABLE, 0)  # the command may not read this process's memory
    command = os.fork()
    if command:
        _reap(command, status_write)
    os.close(status_write)
    _lock_down(plan)


def _build(view: View | None, hidden: tuple[str, ...]) -> None:
    if view is None:
        mounts.cover(hidden)
        mounts.mount_proc()
    else:
        mounts.enter_view(view, hidden)


def _lock_down(plan: JailPlan) -> None:
    if plan.cwd is not None:
        os.chdir(plan.cwd)
    for which, value in plan.rlimits:
        _lower(which, value)
    kernel.drop_capabilities()
    kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
    if plan.landlock and plan.view is not None:
        read_only, read_write, devices = landlock_paths(plan.view)
        landlock.restrict_self(read_only, read_write, devices, listable=("/", "/dev"))
    if plan.seccomp:
        seccomp.install()


def landlock_paths(view: View) -> tuple[list[str], list[str], list[str]]:
    """The view's paths as Landlock grants them: read-only, read-write, devices."""
    terminal = [os.ttyname(0), "/dev/tty"] if view.terminal else []
    read_only = ["/etc", "/proc"]
    read_only += [mount.target for mount in view.mounts if not mount.writable]
    read_write = ["/dev/shm", *view.scratch]  # noqa: S108 - the jail's own, private
    read_write += [mount.target for mount in view.mounts if mount.writable]
    return read_only, read_write, [*view.devices, *terminal]


def _lower(which: int, value: int) -> None:
    _soft, hard = resource.getrlimit(which)
    capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (capped, capped))


def _keep(init: int, status_read: int, status_fd: int | None) -> None:
    """The keeper: wait for the command's status, pass it on, and leave as the command
    did. Never returns."""
    _only_fd(status_read, status_fd)
    kernel.prctl(kernel.PR_SET_DUMPABLE, 0)  # re-raising a crash signal dumps no core
    for sig in _PARENT_SIGNALS:  # the command decides how to end; this follows it
        _libc.signal(ctypes.c_int(sig), ctypes.c_void_p(_SIG_IGN))
    data = os.read(status_read, _STATUS.size)
    # Init died before the command ended when it said nothing: its own status says how.
    whole = len(data) == _STATUS.size
    status = _STATUS.unpack(data)[0] if whole else os.waitpid(init, 0)[1]
    if status_fd is not None:
        os.write(status_fd, _STATUS.pack(status))  # the waiter goes on at once...
        # ...while this process, the group's leader, keeps the group's number taken until
        # the waiter has done with it (closed its end, or killed the group): no other
        # group can get the number it signals. (A reaped Popen child is a zombie till then.)
        poller = select.poll()
        poller.register(status_fd, 0)  # only the error of a pipe whose reader is gone
        poller.poll()
        os._exit(0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        _libc.signal(ctypes.c_int(number), ctypes.c_void_p(_SIG_DFL))
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _reap(command: int, status_write: int) -> None:
    """Init: reap every orphan until the command ends, pass its status on. Never returns."""
    _only_fd(status_write)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        if pid == command:
            os.write(status_write, _STATUS.pack(status))
            os._exit(0)


def _reader_gone(write_fd: int) -> bool:
    """Whether the read end of this pipe is closed (its only reader, the keeper, died)."""
    poller = select.poll()
    poller.register(write_fd, select.POLLOUT)
    return any(events & select.POLLERR for _fd, events in poller.poll(0))


def _only_fd(*keep: int | None) -> None:
    """Close every descriptor but `keep`: pipes the spawner waits on see their end when
    the command's copies close, and nothing of the host stays open here. (By number, not
    by listing /proc: this process's /proc may already be the jail's.)"""
    low = 0
    for fd in sorted(fd for fd in keep if fd is not None):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _MAX_FD)

"""The seccomp filter on the real kernel: each test installs it in a fresh interpreter."""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolrun.sandbox.jail import seccomp

MODULE = Path(seccomp.__file__)  # the child programs load it by path: standard library only

_64_BIT = ctypes.sizeof(ctypes.c_void_p) == 8
pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.uname().machine not in {"x86_64", "aarch64"} or not _64_BIT,
    reason="the filter exists for 64-bit x86_64 and aarch64 Linux",
)
x86_64_only = pytest.mark.skipif(
    os.uname().machine != "x86_64", reason="system call numbers below are x86_64's"
)

# Loads the module by path (it is stdlib-only), then installs the filter; attempt() prints
# "<label> ok" or "<label> <errno name>".
PRELUDE = f"""
import ctypes, errno, importlib.util, os, stat, subprocess, sys
spec = importlib.util.spec_from_file_location("seccomp", {str(MODULE)!r})
seccomp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(seccomp)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def attempt(label, call, *args):
    try:
        call(*args)
    except OSError as error:
        print(label, errno.errorcode[error.errno])
    else:
        print(label, "ok")

def raw(*args):
    if libc.syscall(*args) < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))

def clone(flags):
    pid = libc.syscall(56, ctypes.c_ulong(flags), 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    os.waitpid(pid, 0)
"""
INSTALL = "seccomp.install()\n"


def _run(code: str, *, before_install: str = "") -> subprocess.CompletedProcess[str]:
    program = PRELUDE + textwrap.dedent(before_install) + INSTALL + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )


def _results(code: str, *, before_install: str = "") -> dict[str, str]:
    done = _run(code, before_install=before_install)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def test_supported_here() -> None:
    assert seccomp.unsupported() is None


def test_chmod_refuses_set_id_bits(tmp_path: Path) -> None:
    target = tmp_path / "tool"
    target.write_bytes(b"#!/bin/sh\n")
    results = _results(f"""
        path = {str(target)!r}
        attempt("setuid", os.chmod, path, 0o4755)
        attempt("setgid", os.chmod, path, 0o2755)
        attempt("plain", os.chmod, path, 0o751)
        print("mode", oct(stat.S_IMODE(os.stat(path).st_mode)))
        fd = os.open(path, os.O_RDONLY)
        attempt("fsetuid", os.fchmod, fd, 0o4700)
        attempt("fsetgid", os.fchmod, fd, 0o2700)
        attempt("fplain", os.fchmod, fd, 0o700)
        print("fmode", oct(stat.S_IMODE(os.stat(path).st_mode)))
        chmod = subprocess.run(["chmod", "u+s", path], stderr=subprocess.DEVNULL)
        print("program", chmod.returncode)
        print("after", oct(stat.S_IMODE(os.stat(path).st_mode)))
    """)
    assert results.pop("program") != "0"
    assert results == {
        "setuid": "EPERM",
        "setgid": "EPERM",
        "plain": "ok",
        "mode": "0o751",
        "fsetuid": "EPERM",
        "fsetgid": "EPERM",
        "fplain": "ok",
        "fmode": "0o700",
        "after": "0o700",
    }


def test_create_refuses_set_id_bits(tmp_path: Path) -> None:
    setuid, plain = tmp_path / "setuid", tmp_path / "plain"
    results = _results(f"""
        flags = os.O_CREAT | os.O_WRONLY
        attempt("setuid", os.open, {str(setuid)!r}, flags, 0o4755)
        print("exists", os.path.exists({str(setuid)!r}))
        attempt("plain", os.open, {str(plain)!r}, flags, 0o644)
    """)
    assert results == {"setuid": "EPERM", "exists": "False", "plain": "ok"}
    assert plain.exists()


def test_mknod_refuses_set_id_bits(tmp_path: Path) -> None:
    setuid, plain = tmp_path / "setuid", tmp_path / "plain"
    results = _results(f"""
        attempt("setuid", os.mknod, {str(setuid)!r}, stat.S_IFIFO | 0o4644)
        attempt("plain", os.mknod, {str(plain)!r}, stat.S_IFIFO | 0o644)
    """)
    assert results == {"setuid": "EPERM", "plain": "ok"}
    assert not setuid.exists()
    assert plain.is_fifo()


def test_no_new_user_namespace() -> None:
    results = _results("""
        attempt("unshare", raw, 272, 0x10000000)
        program = subprocess.run(["unshare", "-U", "true"], stderr=subprocess.DEVNULL)
        print("program", program.returncode)
    """)
    assert results["unshare"] == "EPERM"
    assert results["program"] != "0"


def test_refused_kernel_surface() -> None:
    results = _results("""
        attempt("io_uring_setup", raw, 425, 1, None)
        attempt("keyctl", raw, 250, 0, -3)
    """)
    assert results == {"io_uring_setup": "EPERM", "keyctl": "EPERM"}


def test_normal_work_still_runs() -> None:
    results = _results("""
        import multiprocessing, threading
        seen = []
        thread = threading.Thread(target=seen.append, args=("thread",))
        thread.start()
        thread.join()
        print("thread", seen[0])
        shell = subprocess.run(["/bin/sh", "-c", "echo hi | cat"], capture_output=True, text=True)
        print("shell", shell.stdout.strip())
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        with multiprocessing.Pool(2) as pool:
            print("pool", pool.map(abs, [-1, -2, -3]))
    """)
    assert results == {"thread": "thread", "shell": "hi", "fork": "7", "pool": "[1, 2, 3]"}


def test_filter_covers_threads_started_before_install(tmp_path: Path) -> None:
    target = tmp_path / "tool"
    target.touch()
    started = f"""
        import threading
        go = threading.Event()
        def later():
            go.wait(30)
            attempt("thread", os.chmod, {str(target)!r}, 0o4755)
        thread = threading.Thread(target=later)
        thread.start()
    """
    results = _results("go.set()\nthread.join()", before_install=started)
    assert results == {"thread": "EPERM"}
    assert target.stat().st_mode & 0o6000 == 0


@x86_64_only
def test_every_mode_call_by_number(tmp_path: Path) -> None:
    """Each x86_64 call that gives a file a mode, made directly, with and without set-id bits."""
    results = _results(f"""
        os.chdir({str(tmp_path)!r})
        at = -100
        fd = os.open("file", os.O_CREAT | os.O_WRONLY, 0o600)
        calls = {{
            "chmod": lambda name, mode: raw(90, b"file", mode),
            "fchmod": lambda name, mode: raw(91, fd, mode),
            "fchmodat": lambda name, mode: raw(268, at, b"file", mode),
            "fchmodat2": lambda name, mode: raw(452, at, b"file", mode, 0),
            "open": lambda name, mode: raw(2, name, os.O_CREAT | os.O_WRONLY, mode),
            "openat": lambda name, mode: raw(257, at, name, os.O_CREAT | os.O_WRONLY, mode),
            "creat": lambda name, mode: raw(85, name, mode),
            "mknod": lambda name, mode: raw(133, name, stat.S_IFIFO | mode, 0),
            "mknodat": lambda name, mode: raw(259, at, name, stat.S_IFIFO | mode, 0),
        }}
        for label, call in calls.items():
            attempt(label + "-setuid", call, label.encode() + b"-setuid", 0o4644)
            attempt(label + "-setgid", call, label.encode() + b"-setgid", 0o2644)
            attempt(label + "-plain", call, label.encode() + b"-plain", 0o644)
    """)
    for name in ("chmod", "fchmod", "fchmodat", "fchmodat2"):
        assert results.pop(f"{name}-plain") in ({"ok", "ENOSYS"} if name == "fchmodat2" else {"ok"})
    for name in ("open", "openat", "creat", "mknod", "mknodat"):
        assert results.pop(f"{name}-plain") == "ok"
        assert (tmp_path / f"{name}-plain").exists()
        assert not (tmp_path / f"{name}-setuid").exists()
    assert set(results.values()) == {"EPERM"}
    assert len(results) == 18


@x86_64_only
def test_every_refused_call_by_number() -> None:
    """Arguments are invalid, so a call the filter let through would fail with another errno."""
    results = _results("""
        attempt("clone", clone, 0x10000000 | 17)
        calls = {
            "unshare": (272, 0x10000000),
            "io_uring_setup": (425, 0, None),
            "io_uring_enter": (426, -1, 0, 0, 0, None, 0),
            "io_uring_register": (427, -1, 0, None, 0),
            "keyctl": (250, -1),
            "add_key": (248, None, None, None, 0, 0),
            "request_key": (249, None, None, None, 0),
            "bpf": (321, -1, None, 0),
            "perf_event_open": (298, None, 0, -1, -1, 0),
            "userfaultfd": (323, -1),
            "kexec_load": (246, 0, 0, None, -1),
            "kexec_file_load": (320, -1, -1, 0, None, -1),
            "init_module": (175, None, 0, None),
            "finit_module": (313, -1, None, -1),
            "delete_module": (176, None, -1),
        }
        for label, args in calls.items():
            attempt(label, raw, *args)
        attempt("openat2", raw, 437, -100, b".", None, 0)
        attempt("clone3", raw, 435, None, 0)
        attempt("clone-plain", clone, 17)
    """)
    assert results.pop("openat2") == "ENOSYS"
    assert results.pop("clone3") == "ENOSYS"
    assert results.pop("clone-plain") == "ok"
    assert set(results.values()) == {"EPERM"}
    assert len(results) == 16


@x86_64_only
def test_x32_calls_kill_the_process() -> None:
    results = _results("attempt('no-call', raw, -1)")
    assert results == {"no-call": "ENOSYS"}
    done = _run("raw(0x40000000 | 39)  # getpid, x32 numbering")
    assert done.returncode == -signal.SIGSYS


@pytest.mark.parametrize(
    ("machine", "headers"),
    [
        ("x86_64", ["x86_64-linux-gnu/asm/unistd_64.h", "asm/unistd_64.h"]),
        ("aarch64", ["asm-generic/unistd.h"]),
    ],
)
def test_numbers_match_kernel_headers(machine: str, headers: list[str]) -> None:
    found = [Path("/usr/include", header) for header in headers]
    path = next((header for header in found if header.exists()), None)
    if path is None:
        pytest.skip(f"no {headers[0]} installed")
    defined = {
        name: int(number)
        for name, number in re.findall(r"#define __NR_(\w+)\s+(\d+)\b", path.read_text())
    }
    ours = seccomp._SYSCALLS[machine]
    # Headers older than Linux 6.6 lack fchmodat2.
    known = {name: number for name, number in ours.items() if name in defined}
    assert known == {name: defined[name] for name in known}
    assert set(ours) - set(known) <= {"fchmodat2"}
    assert len(seccomp._build(machine)) % 8 == 0

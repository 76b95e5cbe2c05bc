"""A seccomp filter for the jailed tool: no set-id files, and less kernel to attack.

Even with no capabilities, a tool whose kernel uid is 0 may mark a file it owns set-uid
root, for a host user to run later; the filter refuses any mode with set-id bits wherever a
call sets one. It also shuts kernel surface that the other layers miss (io_uring runs
calls this filter never sees) or that container runtimes commonly block. Standard library
only: it runs in the forked child just before exec.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

__all__ = ["SeccompError", "install", "unsupported"]


class SeccompError(OSError):
    """Installing the filter failed; the message names the step."""


# Per architecture: the AUDIT_ARCH the kernel reports, then system call numbers
# (x86_64: arch/x86/entry/syscalls/syscall_64.tbl; aarch64: include/uapi/asm-generic/unistd.h).
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# Calls added since Linux 5.1 have one number on every architecture.
_SINCE_5_1 = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "clone3": 435,
    "openat2": 437,
    "fchmodat2": 452,
}
_SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "open": 2,
        "clone": 56,
        "creat": 85,
        "chmod": 90,
        "fchmod": 91,
        "mknod": 133,
        "init_module": 175,
        "delete_module": 176,
        "kexec_load": 246,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "openat": 257,
        "mknodat": 259,
        "fchmodat": 268,
        "unshare": 272,
        "perf_event_open": 298,
        "finit_module": 313,
        "seccomp": 317,
        "kexec_file_load": 320,
        "bpf": 321,
        "userfaultfd": 323,
        **_SINCE_5_1,
    },
    "aarch64": {
        "mknodat": 33,
        "fchmod": 52,
        "fchmodat": 53,
        "openat": 56,
        "unshare": 97,
        "kexec_load": 104,
        "init_module": 105,
        "delete_module": 106,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "clone": 220,
        "perf_event_open": 241,
        "finit_module": 273,
        "seccomp": 277,
        "bpf": 280,
        "userfaultfd": 282,
        "kexec_file_load": 294,
        **_SINCE_5_1,
    },
}

# Which argument holds the mode each call gives a file; absent calls are not on the arch.
_MODE_ARG = {
    "chmod": 1,
    "fchmod": 1,
    "fchmodat": 2,
    "fchmodat2": 2,
    "open": 2,
    "openat": 3,
    "creat": 1,
    "mknod": 1,
    "mknodat": 2,
}
_SET_ID_BITS = 0o6000
_FLAGS_ARG = {"unshare": 0, "clone": 0}
_CLONE_NEWUSER = 0x10000000
# Their arguments sit in a struct the filter cannot read. ENOSYS reads as an older kernel:
# glibc falls back to clone, and careful callers of openat2 to openat, which it can check.
_UNKNOWN = ("openat2", "clone3")
_REFUSED = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
)

_X32_BIT = 0x40000000
_NO_SYSCALL = 0xFFFFFFFF  # nr -1, which a tracer sets to skip a call; the kernel answers ENOSYS

_LD_ABS_W, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_NR_AT, _ARCH_AT = 0, 4
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_INSTRUCTION = struct.Struct("<HBBI")  # struct sock_filter: code, jt, jf, k

_PR_SET_NO_NEW_PRIVS, _PR_GET_SECCOMP = 38, 21
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1


def _arg_at(index: int) -> int:
    """Offset of the low 32 bits of args[index] in struct seccomp_data (little-endian)."""
    return 16 + 8 * index


class _Program:
    """Classic BPF emitted rule by rule; every jump stays inside its rule, so none overflows."""

    def __init__(self) -> None:
        self.code: list[bytes] = []

    def emit(self, code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        self.code.append(_INSTRUCTION.pack(code, jt, jf, k))

    def on_call(self, nr: int, ret: int) -> None:
        """Return `ret` on call `nr`, whatever its arguments."""
        self.emit(_JEQ_K, nr, jf=1)
        self.emit(_RET_K, ret)

    def on_arg_bits(self, nr: int, arg: int, mask: int, ret: int) -> None:
        """Return `ret` when call `nr` has any of `mask` in the low 32 bits of `arg`."""
        self.emit(_JEQ_K, nr, jf=4)
        self.emit(_LD_ABS_W, _arg_at(arg))
        self.emit(_JSET_K, mask, jf=1)
        self.emit(_RET_K, ret)
        self.emit(_LD_ABS_W, _NR_AT)


def _build(machine: str) -> bytes:
    """The filter program for `machine`, ready to hand to the kernel."""
    numbers = _SYSCALLS[machine]
    program = _Program()
    program.emit(_LD_ABS_W, _ARCH_AT)
    # Another ABI (i386, arm32) numbers calls differently: nothing below would hold.
    program.emit(_JEQ_K, _AUDIT_ARCH[machine], jt=1)
    program.emit(_RET_K, _RET_KILL_PROCESS)
    program.emit(_LD_ABS_W, _NR_AT)
    if machine == "x86_64":
        # x32 calls share the arch value but carry their own numbers.
        program.emit(_JSET_K, _X32_BIT, jf=2)
        program.emit(_JEQ_K, _NO_SYSCALL, jt=1)
        program.emit(_RET_K, _RET_KILL_PROCESS)
    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    for name, arg in _MODE_ARG.items():
        if name in numbers:
            program.on_arg_bits(numbers[name], arg, _SET_ID_BITS, eperm)
    for name, arg in _FLAGS_ARG.items():
        program.on_arg_bits(numbers[name], arg, _CLONE_NEWUSER, eperm)
    for name in _UNKNOWN:
        program.on_call(numbers[name], enosys)
    for name in _REFUSED:
        program.on_call(numbers[name], eperm)
    program.emit(_RET_K, _RET_ALLOW)
    return b"".join(program.code)


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_MACHINE = os.uname().machine
# A 32-bit process on a 64-bit kernel (i386, x32, arm32) calls through another ABI.
_SUPPORTED = _MACHINE in _SYSCALLS and ctypes.sizeof(ctypes.c_void_p) == 8
# Built at import, so the forked child only hands the kernel a pointer.
_PROGRAM = _build(_MACHINE) if _SUPPORTED else b""
_CODE = ctypes.create_string_buffer(_PROGRAM, len(_PROGRAM))
_FPROG = ctypes.create_string_buffer(  # struct sock_fprog: length, padding, pointer
    struct.pack("HxxxxxxQ", len(_PROGRAM) // _INSTRUCTION.size, ctypes.addressof(_CODE))
)


def unsupported() -> str | None:
    """None where install() works here, else why not."""
    if sys.platform != "linux":
        return f"seccomp is Linux only, not {sys.platform}"
    if _MACHINE not in _SYSCALLS:
        return f"no seccomp filter for architecture {_MACHINE}"
    if not _SUPPORTED:
        return f"no seccomp filter for a 32-bit process on {_MACHINE}"
    if _libc.prctl(ctypes.c_int(_PR_GET_SECCOMP), 0, 0, 0, 0) < 0:
        return "the kernel has no seccomp"
    return None


def install() -> None:
    """Install the filter on this process, all its threads and everything it starts.

    Raises:
        SeccompError: the platform has no filter, or the kernel refused it.
    """
    reason = unsupported()
    if reason is not None:
        raise SeccompError(errno.ENOSYS, reason)
    # Without it an unprivileged process may not install a filter, and a set-uid program
    # it runs would still gain the privileges the filter is there to keep out.
    if _libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), 1, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise SeccompError(code, f"no_new_privs: {os.strerror(code)}")
    result = _libc.syscall(
        ctypes.c_long(_SYSCALLS[_MACHINE]["seccomp"]),
        ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC),
        _FPROG,
    )
    if result < 0:
        code = ctypes.get_errno()
        raise SeccompError(code, f"seccomp filter: {os.strerror(code)}")
    if result > 0:
        raise SeccompError(errno.EBUSY, f"seccomp filter: thread {result} has another filter")

"""Landlock: confine the files this process, and everything it starts, may reach.

Runs between fork and exec, so libc and every prototype are loaded at import; a call
makes system calls only.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
from collections.abc import Sequence

__all__ = ["LandlockError", "abi_version", "restrict_self"]

# The same numbers on every architecture (the syscalls came after the tables were unified).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
_MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
_MAKE_SYM, _REFER, _TRUNCATE, _IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
# ABI → the filesystem rights it added (4 added network rights, 6 scopes, 7 audit flags).
_FS_SINCE = ((1, (1 << 13) - 1), (2, _REFER), (3, _TRUNCATE), (5, _IOCTL_DEV))
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_SCOPES_SINCE = 6

_READ_ONLY = _EXECUTE | _READ_FILE | _READ_DIR
_READ_WRITE = ((1 << 16) - 1) & ~(_MAKE_CHAR | _MAKE_BLOCK)
_DEVICE = _READ_FILE | _WRITE_FILE | _TRUNCATE | _IOCTL_DEV
# The kernel answers EINVAL to a rule that gives a non-directory any other right.
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV

# Always the full struct: a kernel that knows fewer fields accepts a longer one whose extra
# fields are zero, and those it does not know are zero below.
_RULESET_ATTR = struct.Struct("=QQQ")  # handled_access_fs, handled_access_net, scoped
_PATH_BENEATH = struct.Struct("=Qi")  # packed: allowed_access, parent_fd

_libc = ctypes.CDLL(None, use_errno=True)
_long, _pointer = ctypes.c_long, ctypes.c_char_p
_create_ruleset = ctypes.CFUNCTYPE(_long, _long, _pointer, ctypes.c_size_t, _long, use_errno=True)(
    ("syscall", _libc)
)
_add_rule = ctypes.CFUNCTYPE(_long, _long, _long, _long, _pointer, _long, use_errno=True)(
    ("syscall", _libc)
)
_restrict_self = ctypes.CFUNCTYPE(_long, _long, _long, _long, use_errno=True)(("syscall", _libc))
_prctl = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, *[ctypes.c_ulong] * 4, use_errno=True)(
    ("prctl", _libc)
)


class LandlockError(OSError):
    """The ruleset could not be made or applied; the message names the step."""


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when the kernel lacks Landlock or boots without it."""
    return max(_version(), 0)


def restrict_self(
    read_only: Sequence[str],
    read_write: Sequence[str],
    devices: Sequence[str] = (),
    listable: Sequence[str] = (),
) -> int:
    """Allow only these paths from now on, for this process and all it starts; returns the ABI.

    `read_only` may be executed and read, `read_write` anything but making char or block
    devices, `devices` read, written, truncated and sent ioctls, `listable` directories
    listed (their files are not readable by that rule). Paths that do not exist are skipped.

    Raises:
        LandlockError: Landlock is unavailable, or a system call failed (errno kept).
    """
    abi = _check(_version(), "landlock_create_ruleset(VERSION)")
    _check(_prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    handled = sum(rights for since, rights in _FS_SINCE if abi >= since)
    scoped = (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= _SCOPES_SINCE else 0
    attr = _RULESET_ATTR.pack(handled, 0, scoped)
    ruleset = _check(
        _create_ruleset(_SYS_CREATE_RULESET, attr, _RULESET_ATTR.size, 0),
        "landlock_create_ruleset",
    )
    grants = (
        (read_only, _READ_ONLY),
        (read_write, _READ_WRITE),
        (devices, _DEVICE),
        (listable, _READ_DIR),
    )
    try:
        for paths, rights in grants:
            for path in paths:
                _allow(ruleset, path, rights & handled)
        _check(_restrict_self(_SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _version() -> int:
    return int(_create_ruleset(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise LandlockError(exc.errno, f"open {path}: {exc.strerror}") from exc
    try:
        if not _is_directory(fd, path):
            rights &= _FILE_RIGHTS
        rule = _PATH_BENEATH.pack(rights, fd)
        _check(
            _add_rule(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0),
            f"landlock_add_rule {path}",
        )
    finally:
        os.close(fd)


def _is_directory(fd: int, path: str) -> bool:
    try:
        return stat.S_ISDIR(os.fstat(fd).st_mode)
    except OSError as exc:
        raise LandlockError(exc.errno, f"stat {path}: {exc.strerror}") from exc


def _check(result: int, step: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise LandlockError(code, f"{step}: {os.strerror(code)}")
    return int(result)

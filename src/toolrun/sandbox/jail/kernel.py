"""The system calls the jail is made of, through libc: namespaces, mounts, ids, loopback."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import stat
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4

_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
# The same numbers on every architecture: open_tree and move_mount (5.2), openat2 (5.6),
# mount_setattr (5.12).
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_OPENAT2, _SYS_MOUNT_SETATTR = 428, 429, 437, 442
_OPEN_TREE_CLONE, _AT_EMPTY_PATH = 0x1, 0x1000
_MOVE_MOUNT_F_EMPTY_PATH, _MOVE_MOUNT_T_EMPTY_PATH = 0x4, 0x40
_RESOLVE_NO_SYMLINKS = 0x04
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
_MOUNT_ATTR_SIZE = 32  # struct mount_attr: attr_set, attr_clr, propagation, userns_fd (u64 each)
_LOCKED_FLAGS = (  # statvfs flag → mount flag a remount must keep (the kernel locks them)
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, 0x400),
    (os.ST_NODIRATIME, 0x800),
    (os.ST_RELATIME, 0x200000),
)
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_IFREQ = struct.Struct("16sH22x")  # struct ifreq: name, then the flags member of the union

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_MACHINE = os.uname().machine


class KernelError(OSError):
    """A step of the jail's set-up failed; the message names the step."""


def _check(result: int, step: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise KernelError(code, f"{step}: {os.strerror(code)}")


def _bytes(value: str | None) -> bytes | None:
    return None if value is None else os.fsencode(value)


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None) -> None:
    result = _libc.mount(
        _bytes(source), _bytes(target), _bytes(kind), ctypes.c_ulong(flags), _bytes(data)
    )
    _check(result, f"mount {kind or source} on {target}")


def bind(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC, None)


def harden(target: str, *, read_only: bool, recursive: bool = True, device: bool = False) -> None:
    """Make the mount at `target` nosuid and nodev (not nodev for a `device`), and
    read-only when asked (its submounts too when `recursive`)."""
    wanted = _MOUNT_ATTR_NOSUID | (0 if device else _MOUNT_ATTR_NODEV)
    wanted |= _MOUNT_ATTR_RDONLY if read_only else 0
    attr = struct.pack("QQQQ", wanted, 0, 0, 0)
    result = _libc.syscall(
        ctypes.c_long(_SYS_MOUNT_SETATTR),
        ctypes.c_int(_AT_FDCWD),
        _bytes(target),
        ctypes.c_uint(_AT_RECURSIVE if recursive else 0),
        ctypes.c_char_p(attr),
        ctypes.c_size_t(_MOUNT_ATTR_SIZE),
    )
    if result == 0:
        return
    if ctypes.get_errno() != errno.ENOSYS:
        _check(int(result), f"harden {target}")
    # Kernels before 5.12: a remount, which must repeat the flags the kernel locked.
    found = os.statvfs(target).f_flag
    kept = sum(flag for stat_flag, flag in _LOCKED_FLAGS if found & stat_flag)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | kept | (0 if device else MS_NODEV)
    flags |= MS_RDONLY if read_only else 0
    mount(None, target, None, flags, None)


def open_no_symlinks(path: str) -> int:
    """An O_PATH descriptor of `path`, refused if any component is a symbolic link (a
    directory tools can write may hold one by now: a bind must not follow it out).

    Raises:
        KernelError: the path has a link in it, or cannot be opened.
    """
    how = struct.pack("QQQ", os.O_PATH | os.O_CLOEXEC, 0, _RESOLVE_NO_SYMLINKS)
    fd = int(
        _libc.syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(_AT_FDCWD),
            _bytes(path),
            ctypes.c_char_p(how),
            ctypes.c_size_t(len(how)),
        )
    )
    if fd >= 0:
        return fd
    if ctypes.get_errno() != errno.ENOSYS:
        _check(-1, f"open {path} (no links)")
    return _walk_no_symlinks(path)


def _walk_no_symlinks(path: str) -> int:
    """Kernels before 5.6: the same, one component at a time with O_NOFOLLOW."""
    fd = os.open("/", os.O_PATH | os.O_CLOEXEC)
    try:
        for name in (part for part in path.split("/") if part):
            following = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = following
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                raise KernelError(errno.ELOOP, f"open {path} (no links): a link in the path")
    except BaseException:
        os.close(fd)
        raise
    return fd


def bind_fd(source: int, target: int, *, read_only: bool, device: bool = False) -> None:
    """Bind what `source` (a descriptor) is onto `target` (one), nosuid, nodev unless a
    `device`, read-only when asked: by descriptor end to end, no name looked up again."""
    wanted = _MOUNT_ATTR_NOSUID | (0 if device else _MOUNT_ATTR_NODEV)
    wanted |= _MOUNT_ATTR_RDONLY if read_only else 0
    flags = _OPEN_TREE_CLONE | os.O_CLOEXEC | _AT_EMPTY_PATH | _AT_RECURSIVE
    tree = int(
        _libc.syscall(
            ctypes.c_long(_SYS_OPEN_TREE), ctypes.c_int(source), b"", ctypes.c_uint(flags)
        )
    )
    if tree < 0:
        _check(-1, "open_tree")
    try:
        attr = struct.pack("QQQQ", wanted, 0, 0, 0)
        set_attr = _libc.syscall(
            ctypes.c_long(_SYS_MOUNT_SETATTR),
            ctypes.c_int(tree),
            b"",
            ctypes.c_uint(_AT_EMPTY_PATH | _AT_RECURSIVE),
            ctypes.c_char_p(attr),
            ctypes.c_size_t(_MOUNT_ATTR_SIZE),
        )
        _check(int(set_attr), "mount_setattr")
        moved = _libc.syscall(
            ctypes.c_long(_SYS_MOVE_MOUNT),
            ctypes.c_int(tree),
            b"",
            ctypes.c_int(target),
            b"",
            ctypes.c_uint(_MOVE_MOUNT_F_EMPTY_PATH | _MOVE_MOUNT_T_EMPTY_PATH),
        )
        _check(int(moved), "move_mount")
    finally:
        os.close(tree)


def pivot_root_here() -> None:
    """Make the working directory (a mount point) the root, and drop the old root.

    pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only
    the new tree, with nothing of the host reachable by path.
    """
    number = _SYS_PIVOT_ROOT.get(_MACHINE)
    if number is None:
        raise KernelError(errno.ENOSYS, f"pivot_root: unknown on {_MACHINE}")
    _check(int(_libc.syscall(ctypes.c_long(number), b".", b".")), "pivot_root")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "detach the old root")
    os.chdir("/")


def map_ids(inside_uid: int, inside_gid: int, outside_uid: int, outside_gid: int) -> None:
    """Map this process's own ids into its new user namespace (the one mapping an
    unprivileged process may write)."""
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{inside_uid} {outside_uid} 1")
        _write("/proc/self/gid_map", f"{inside_gid} {outside_gid} 1")
    except OSError as exc:
        raise KernelError(exc.errno, f"map ids into the user namespace: {exc.strerror}") from exc


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def loopback_up() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        current = fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, _IFREQ.pack(b"lo", 0))
        flags = _IFREQ.unpack(current)[1]
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, _IFREQ.pack(b"lo", flags | _IFF_UP))
    except OSError as exc:
        raise KernelError(exc.errno, f"bring loopback up: {exc.strerror}") from exc
    finally:
        sock.close()


def prctl(option: int, value: int) -> None:
    result = _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), 0, 0, 0)
    _check(result, f"prctl {option}")


def drop_capabilities() -> None:
    """Empty the bounding and ambient sets: nothing this process runs can gain a
    capability back, whatever its uid or the file's capabilities."""
    prctl_ambient = _libc.prctl(
        ctypes.c_int(PR_CAP_AMBIENT), ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0
    )
    _check(prctl_ambient, "clear ambient capabilities")
    cap = 0
    while _libc.prctl(ctypes.c_int(PR_CAPBSET_DROP), ctypes.c_ulong(cap), 0, 0, 0) == 0:
        cap += 1
    if ctypes.get_errno() != errno.EINVAL:  # EINVAL: past the last capability
        _check(-1, "drop bounding capabilities")


def sethostname(name: str) -> None:
    data = name.encode()
    _check(_libc.sethostname(data, ctypes.c_size_t(len(data))), "sethostname")

"""Building a view: a fresh tmpfs root holding only what the plan names, made the root.

Runs in the jail's init process, inside new user, mount and PID namespaces, while the
host's tree is still reachable (the binds' sources, and a fully visible /proc, which the
kernel wants before it lets a user namespace mount a procfs of its own).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from toolrun.sandbox.jail import kernel
from toolrun.sandbox.jail.plan import View

_ROOT_OPTIONS = "size=4m,mode=0755"
# Parts of /proc that change the host, not this process tree: read-only (bubblewrap's
# four, and the other writable kernel tables).
_PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "asound", "scsi", "driver")
_DEV_LINKS = (
    ("/dev/fd", "/proc/self/fd"),
    ("/dev/stdin", "/proc/self/fd/0"),
    ("/dev/stdout", "/proc/self/fd/1"),
    ("/dev/stderr", "/proc/self/fd/2"),
)
_NOSUID_NODEV = kernel.MS_NOSUID | kernel.MS_NODEV


def enter_view(view: View, hidden: tuple[str, ...]) -> None:
    """Mount the view on its staging directory and pivot into it.

    Raises:
        KernelError: a mount failed (the message names it).
    """
    root = view.staging
    kernel.mount("toolrun-root", root, "tmpfs", _NOSUID_NODEV, _ROOT_OPTIONS)
    terminal = _terminal_entry() if view.terminal else ()
    for kind, source, target in _ordered(view, terminal):
        _place(root, kind, source, target, view.scratch_bytes)
    for path, target in (*view.symlinks, *_DEV_LINKS):
        _make_parent(root, path)
        os.symlink(target, root + path)
    cover(hidden, prefix=root)
    kernel.harden(root, read_only=True, recursive=False)
    os.chdir(root)
    kernel.pivot_root_here()


def mount_proc(prefix: str = "") -> None:
    """A procfs of this PID namespace at /proc: no other process of the host is in it."""
    target = prefix + "/proc"
    kernel.mount("proc", target, "proc", _NOSUID_NODEV | kernel.MS_NOEXEC, None)
    for name in _PROC_READ_ONLY:
        path = f"{target}/{name}"
        if os.path.exists(path):
            kernel.bind(path, path)
            kernel.harden(path, read_only=True)


def cover(hidden: tuple[str, ...], *, prefix: str = "") -> None:
    """Lay an empty read-only tmpfs over each directory of `hidden` that is in sight."""
    for directory in hidden:
        if os.path.isdir(prefix + directory):
            flags = _NOSUID_NODEV | kernel.MS_NOEXEC | kernel.MS_RDONLY
            kernel.mount("toolrun-hidden", prefix + directory, "tmpfs", flags, "size=4k,mode=0555")


def _terminal_entry() -> tuple[tuple[str, str, str], ...]:
    """This process's terminal (its stdin), bound at its own name, and /dev/tty."""
    name = os.ttyname(0)
    return (("device", name, name), ("device", "/dev/tty", "/dev/tty"))


def _ordered(view: View, terminal: tuple[tuple[str, str, str], ...]) -> list[tuple[str, str, str]]:
    """Every mount as (kind, source, target), parents before what is mounted inside them."""
    entries = [
        *(("rw" if m.writable else "ro", m.source, m.target) for m in view.mounts),
        *(("scratch", "", path) for path in view.scratch),
        ("dev", "", "/dev"),
        ("shm", "", "/dev/shm"),  # noqa: S108 - a private tmpfs
        *(("device", path, path) for path in view.devices),
        *terminal,
        ("proc", "", "/proc"),
    ]
    return sorted(entries, key=lambda entry: (entry[2].count("/"), entry[2]))


def _place(root: str, kind: str, source: str, target: str, scratch_bytes: int) -> None:
    path = root + target
    if kind in ("ro", "rw", "device"):
        _bind(root, source, target, read_only=kind == "ro", device=kind == "device")
    elif kind == "proc":
        os.makedirs(path, exist_ok=True)
        mount_proc(root)
    else:
        os.makedirs(path, exist_ok=True)
        size = 4 << 20 if kind == "dev" else scratch_bytes
        shared = kind == "shm" or target == "/tmp"  # noqa: S108 - the view's own /tmp
        mode = "1777" if shared else "0755" if kind == "dev" else "0700"
        kernel.mount(f"toolrun-{kind}", path, "tmpfs", _NOSUID_NODEV, f"size={size},mode={mode}")


def _bind(root: str, source: str, target: str, *, read_only: bool, device: bool) -> None:
    """Bind `source` at `target` by descriptors: neither may go through a link, since a
    tool may have planted one in a directory it can write (the workspace holds mounts)."""
    found = kernel.open_no_symlinks(source)
    try:
        directory = stat.S_ISDIR(os.fstat(found).st_mode)
        place = _make_target(root, target, directory=directory)
        try:
            kernel.bind_fd(found, place, read_only=read_only, device=device)
        except kernel.KernelError as exc:
            if exc.errno != errno.ENOSYS:
                raise
            # Kernels before 5.12: bound through the descriptors' names in /proc, then
            # hardened by name (the target was just made, link by link, in the jail).
            kernel.bind(f"/proc/self/fd/{found}", f"/proc/self/fd/{place}")
            kernel.harden(root + target, read_only=read_only, device=device)
        finally:
            os.close(place)
    finally:
        os.close(found)


def _make_target(root: str, target: str, *, directory: bool) -> int:
    """Create `target` under `root` (and what leads to it), following no link; an O_PATH
    descriptor of it."""
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    names = [name for name in target.split("/") if name]
    try:
        for index, name in enumerate(names):
            last_file = index == len(names) - 1 and not directory
            with contextlib.suppress(FileExistsError):
                if last_file:
                    flags = os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
                    os.close(os.open(name, flags, 0o644, dir_fd=fd))
                else:
                    os.mkdir(name, 0o755, dir_fd=fd)
            kind = 0 if last_file else os.O_DIRECTORY
            following = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC | kind, dir_fd=fd)
            os.close(fd)
            fd = following
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            raise kernel.KernelError(errno.ELOOP, f"mount on {target}: it is a link")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _make_parent(root: str, path: str) -> None:
    os.makedirs(os.path.dirname(root + path), exist_ok=True)

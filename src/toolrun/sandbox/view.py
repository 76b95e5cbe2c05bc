"""What of the host a tool's processes see: denied by default, these paths allowed.

- the workspace, read-write (read-only for read_only-level tools);
- read-only: the system's programs and libraries (`SYSTEM_PATHS`), the Python and Node
  installs and ripgrep's directory where they lie outside them (inside the workspace too:
  the platform's own virtualenv is never writable by its tools), the `ETC_ENTRIES` of /etc
  that programs need, and the operator's extra paths;
- an /etc of copies of those entries, and of /etc/passwd, /etc/group, /etc/hosts and
  /etc/hostname written for the view, naming only the tool's own user;
- private and empty, size-capped: /tmp, HOME and /dev/shm;
- the `DEVICES`, and a /proc of the jail's own PID namespace.
Nothing else: not /root, /home, other workspaces, the platform's home, /var or /run.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import toolrun
from toolrun.sandbox.jail.plan import Mount, View

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = (
    "alternatives",  # Debian's program links (/usr/bin/awk → /etc/alternatives/awk)
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "ssl/certs",  # CA certificates, for HTTPS through the proxy (not ssl/private)
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "resolv.conf",
    "protocols",
    "services",
    "mime.types",
    "os-release",
    "inputrc",
    "terminfo",
    "gitconfig",
    "magic",
    "python3",
    f"python{sys.version_info.major}.{sys.version_info.minor}",
)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
# Never shown whole: the kernel's and the host's live state.
FORBIDDEN = ("/proc", "/sys", "/dev", "/run", "/var/run", "/boot")
FALLBACK_HOME = "/home/toolrun"
_UNPRIVILEGED = 1000  # the uid root's tools get inside (mapped to root outside, no powers)


def build_view(
    *,
    home: str,
    installs: Sequence[Path],
    read_only: Sequence[Mount],
    read_write: Sequence[Mount],
    scratch_bytes: int,
) -> View:
    """The view for tools of one workspace; the workspace itself is added per run."""
    uid = os.getuid() or _UNPRIVILEGED
    gid = os.getgid() if os.getuid() else _UNPRIVILEGED
    mounts = [Mount(path, path) for path in SYSTEM_PATHS if _is_real_dir(path)]
    mounts += [Mount(str(_etc_copy(uid, gid, home)), "/etc")]
    mounts += [Mount(str(path), str(path)) for path in _outside_system(installs)]
    mounts += [*read_only, *read_write]
    return View(
        staging=str(_staging_dir()),
        mounts=tuple(mounts),
        symlinks=tuple((path, os.readlink(path)) for path in SYSTEM_PATHS if os.path.islink(path)),
        scratch=("/tmp", home),  # noqa: S108 - private tmpfs mounts
        scratch_bytes=scratch_bytes,
        devices=tuple(path for path in DEVICES if os.path.exists(path)),
        uid=uid,
        gid=gid,
    )


def view_home(workspace: Path) -> str:
    """HOME inside the view: the worker's own home path (so `~/.cargo` means the same
    inside and out), unless the workspace is or holds it."""
    home = Path.home().resolve()
    if home == Path("/") or home == workspace or home.is_relative_to(workspace):
        return FALLBACK_HOME
    return str(home)


def installs(rg_path: Path | None) -> list[Path]:
    """The Python and Node installs, ripgrep's directory and toolrun's own code: programs
    tools run, and code the platform runs (never writable by tools)."""
    found = {*platform_code(rg_path)}
    node = shutil.which("node")
    if node is not None:
        found.add(Path(node).resolve().parent.parent)
    return sorted(found)


@cache
def platform_code(rg_path: Path | None) -> tuple[Path, ...]:
    """Where the platform's own code lies: its Python (virtualenv and base install), the
    directory toolrun is imported from, ripgrep's directory. A workspace holding one of
    them (toolrun's own checkout) shows it read-only, in the jail and to the file tools:
    a tool that rewrote it would run unconfined in the next launcher or worker."""
    package = Path(toolrun.__file__).resolve().parent.parent
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), package}
    if rg_path is not None:
        found.add(rg_path.resolve().parent)
    else:
        found.add(Path(sys.executable).parent)
    resolved = {path.resolve() for path in found}
    # Within another: covered by it.
    return tuple(
        sorted(p for p in resolved if not any(p != o and p.is_relative_to(o) for o in resolved))
    )


def extra_mounts(
    entries: Sequence[str], *, writable: bool, home: str, platform_home: Path
) -> list[Mount]:
    """The operator's extra paths: `~/x` is the worker's home's x, shown at HOME/x.

    Raises:
        ValueError: an entry is malformed, forbidden, or would show the platform's home.
    """
    mounts = []
    for entry in entries:
        source = Path(entry).expanduser().resolve()
        target = Path(home) / entry[2:] if entry.startswith("~/") else source
        problem = _extra_problem(entry, source, platform_home.resolve())
        if problem is not None:
            raise ValueError(f"sandbox path {entry!r} {problem}")
        if source.exists():
            mounts.append(Mount(str(source), str(target), writable))
    return mounts


def _extra_problem(entry: str, source: Path, platform_home: Path) -> str | None:
    if not (entry.startswith("/") or entry.startswith("~/")):
        return "must be absolute or start with ~/"
    if ".." in Path(entry).parts:
        return "must not contain '..'"
    if source in (Path("/tmp"), Path("/var/tmp")):  # noqa: S108 - refused, not used
        return "would show every user's temporary files (other calls' sockets among them)"
    if source.is_relative_to(platform_home):
        return f"is inside the platform's home ({platform_home})"
    if source == Path("/") or source == Path.home().resolve():
        return "would show the whole filesystem or home: name the directory tools need"
    if any(source == Path(top) or source.is_relative_to(top) for top in FORBIDDEN):
        return "is the kernel's or the host's live state"
    if platform_home == source or platform_home.is_relative_to(source):
        return f"would show the platform's home ({platform_home})"
    return None


def _outside_system(paths: Sequence[Path]) -> list[Path]:
    """`paths` the system paths do not hold. One inside the workspace is still mounted
    read-only over it: tools must not rewrite the platform's own Python."""
    return [
        path
        for path in paths
        if not any(path.is_relative_to(top) for top in SYSTEM_PATHS) and path.is_dir()
    ]


def _is_real_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


@cache
def _etc_copy(uid: int, gid: int, home: str) -> Path:
    """The view's /etc, made once per process: copies of `ETC_ENTRIES` (links kept as
    links) and the identity files. One bind mount instead of one per entry."""
    etc = Path(tempfile.mkdtemp(prefix=f"toolrun-etc-{os.getuid()}-"))
    creator = os.getpid()

    def remove() -> None:
        if os.getpid() == creator:  # not a forked pool process: its siblings still use it
            shutil.rmtree(etc, ignore_errors=True)

    atexit.register(remove)
    for name in ETC_ENTRIES:
        source, copy = Path("/etc") / name, etc / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # missing here, or unreadable: not shown
            if source.is_dir() and not source.is_symlink():
                shutil.copytree(source, copy, symlinks=True)
            else:
                shutil.copy2(source, copy, follow_symlinks=False)
    for name, content in _identity_files(uid, gid, home):
        (etc / name).write_text(content)
    etc.chmod(0o755)
    return etc


def _identity_files(uid: int, gid: int, home: str) -> tuple[tuple[str, str], ...]:
    nologin = "/usr/sbin/nologin"
    passwd = (
        f"root:x:0:0:root:/root:{nologin}\n"
        f"toolrun:x:{uid}:{gid}:toolrun:{home}:/bin/bash\n"
        f"nobody:x:65534:65534:nobody:/nonexistent:{nologin}\n"
    )
    group = f"root:x:0:\ntoolrun:x:{gid}:\nnogroup:x:65534:\n"
    hosts = "127.0.0.1\tlocalhost toolrun\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    return (
        ("passwd", passwd),
        ("group", group),
        ("hosts", hosts),
        ("hostname", "toolrun\n"),
    )


def _staging_dir() -> Path:
    """An empty directory of this user's to mount a view's root on (in the jail's own
    mount namespace: the host never sees what is mounted there)."""
    path = Path(tempfile.gettempdir()) / f"toolrun-root-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        found = path.lstat()
        if not path.is_dir() or path.is_symlink() or found.st_uid != os.getuid():
            raise ValueError(f"{path} is not a directory of this user's") from None
    return path

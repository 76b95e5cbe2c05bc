"""What a jail is made of, as plain data: it crosses fork, a unix socket (the terminal
host) and a command line (the launcher), so it is JSON and nothing else."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

NETWORK_NONE = "none"  # a namespace with only loopback
NETWORK_PROXY = "proxy"  # loopback, and a forwarder to the allowlisting proxy's socket
NETWORK_HOST = "host"  # the host's network (isolation turned off or unavailable)


@dataclass(frozen=True)
class Mount:
    """`source` on the host shown at `target` in the view."""

    source: str
    target: str
    writable: bool = False


@dataclass(frozen=True)
class View:
    """The filesystem a jailed process sees: a fresh root holding only these."""

    staging: str  # an empty host directory the new root is mounted on (any will do)
    mounts: tuple[Mount, ...]  # directories and files, read-only unless writable
    symlinks: tuple[tuple[str, str], ...]  # (path, target): /bin → usr/bin on merged-usr hosts
    scratch: tuple[str, ...]  # private, empty, size-capped tmpfs directories (/tmp, HOME)
    scratch_bytes: int
    devices: tuple[str, ...]  # /dev entries bound from the host (null, zero, urandom...)
    terminal: bool = False  # bind the controlling terminal's /dev/pts entry too
    uid: int = 1000  # the ids a jailed process has inside (mapped to the worker's own)
    gid: int = 1000


@dataclass(frozen=True)
class JailPlan:
    """Namespaces, view, limits and the Landlock and seccomp layers of one process tree."""

    network: str = NETWORK_NONE
    proxy_socket: str | None = None
    view: View | None = None  # None: the host's filesystem, with `hidden` covered
    hidden: tuple[str, ...] = ()  # directories covered by an empty read-only tmpfs
    cwd: str | None = None  # working directory inside the view
    rlimits: tuple[tuple[int, int], ...] = ()  # (RLIMIT_*, value), applied last
    landlock: bool = True
    seccomp: bool = True
    env: dict[str, str] | None = field(default=None, compare=False)  # the launcher's only
    join: tuple[str, ...] = ()  # cgroup.procs files entered first (the launcher's caller's)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> JailPlan:
        """Raises: ValueError: `text` is not a plan."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a jail plan is a JSON object")
        view = data.pop("view", None)
        try:
            return cls(
                **_tuples(data, "hidden", "rlimits", "join"),
                view=None if view is None else _view(view),
            )
        except TypeError as exc:
            raise ValueError(f"not a jail plan: {exc}") from exc


def _view(data: dict[str, Any]) -> View:
    mounts = tuple(Mount(**mount) for mount in data.pop("mounts"))
    return View(mounts=mounts, **_tuples(data, "symlinks", "scratch", "devices"))


def _tuples(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """JSON's lists back to the (nested) tuples the dataclasses hold."""
    return {
        key: tuple(tuple(item) if isinstance(item, list) else item for item in value)
        if key in names
        else value
        for key, value in data.items()
    }

"""The confinement every process a tool starts gets under the settings: one jail
(network, filesystem view, Landlock, seccomp, limits), and what this host enforces."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.sandbox.jail import landlock, seccomp
from toolrun.sandbox.jail.forwarder import proxy_env
from toolrun.sandbox.jail.plan import (
    NETWORK_HOST,
    NETWORK_NONE,
    NETWORK_PROXY,
    JailPlan,
    Mount,
    View,
)
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.network import NetworkPolicy
from toolrun.sandbox.output import BoundedBytes
from toolrun.sandbox.proxy import AllowlistProxy, Refusal
from toolrun.sandbox.runner import ProcessRunner
from toolrun.sandbox.view import build_view, extra_mounts, installs, view_home

ISOLATED = "isolated"
_PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Confinement:
    """How the processes of one call are jailed; `plan` gives each its JailPlan."""

    workspace: Path
    view: View | None  # None: the host's filesystem (isolation off or unavailable)
    network: str = NETWORK_NONE
    proxy_socket: str | None = None
    hidden: tuple[str, ...] = ()
    landlock: bool = True
    seccomp: bool = True

    @property
    def home(self) -> str | None:
        """HOME inside the view (None without one)."""
        return None if self.view is None else self.view.scratch[-1]

    def env(self) -> dict[str, str]:
        """What the jail adds to a process's environment (the proxy's address)."""
        return proxy_env() if self.network == NETWORK_PROXY else {}

    def lasting(self) -> Confinement:
        """This jail for a process that outlives the call (a terminal session, a language
        server): no proxy, which ends with the call, so no network at all."""
        if self.network != NETWORK_PROXY:
            return self
        return dataclasses.replace(self, network=NETWORK_NONE, proxy_socket=None)

    def within(self, workspace: Path) -> Confinement:
        """The same jail with a directory of the workspace as the whole workspace."""
        return dataclasses.replace(self, workspace=workspace)

    def plan(
        self,
        *,
        cwd: Path,
        rlimits: tuple[tuple[int, int], ...],
        writable: bool = True,
        terminal: bool = False,
        env: dict[str, str] | None = None,
    ) -> JailPlan:
        view = self.view
        if view is not None:
            space = str(self.workspace)
            pinned = _pinned(self.workspace, view.mounts, writable)
            mounts = (*view.mounts, Mount(space, space, writable), *pinned)
            view = dataclasses.replace(view, mounts=mounts, terminal=terminal)
        return JailPlan(
            network=self.network,
            proxy_socket=self.proxy_socket,
            view=view,
            hidden=self.hidden,
            cwd=str(cwd),
            rlimits=rlimits,
            landlock=self.landlock,
            seccomp=self.seccomp,
            env=env,
        )


def _pinned(workspace: Path, mounts: tuple[Mount, ...], writable: bool) -> list[Mount]:
    """The directories between the workspace and a read-only mount inside it, each bound
    on itself: a mount point cannot be renamed, so none can be moved away and replaced by
    one of the tool's making (the platform's virtualenv two levels down)."""
    found: dict[str, Mount] = {}
    for mount in mounts:
        target = Path(mount.target)
        if mount.writable or not target.is_relative_to(workspace):
            continue
        for parent in target.relative_to(workspace).parents:
            path = str(workspace / parent)
            if parent != Path(".") and path not in found:
                found[path] = Mount(path, path, writable)
    return list(found.values())


@dataclass(frozen=True)
class Enforcement:
    """What this host enforces on tool processes, as /healthz and `toolrun up` say it."""

    filesystem: str  # "isolated (namespaces+landlock+seccomp)" or "degraded: why"
    network: str  # "isolated" or "degraded: why"
    read_only_paths: tuple[str, ...] = ()
    read_write_paths: tuple[str, ...] = ()

    @property
    def filesystem_isolated(self) -> bool:
        return self.filesystem.startswith(ISOLATED)


@dataclass(frozen=True)
class _Settled:
    """What the settings give on this host, found once per process: the jail (None: no
    namespaces at all), why it has no view, and why there are no namespaces."""

    jail: Confinement | None
    view_problem: str | None
    namespace_problem: str | None


_SETTLED: dict[tuple[object, ...], _Settled] = {}


def enforcement(settings: Settings) -> Enforcement:
    """What the jail does on this host under the settings.

    Raises:
        ValueError: an extra sandbox path is malformed or forbidden.
    """
    extras = (tuple(settings.sandbox_read_only_paths), tuple(settings.sandbox_read_write_paths))
    settled = _settle(settings)
    off = _network_off(settings)
    if settled.jail is None:
        why = settled.namespace_problem or "unknown"
        network = off or f"unavailable on this host: {why}"
        return Enforcement(f"degraded: {why}", f"degraded: {network}", *extras)
    jail = settled.jail
    if jail.view is None:
        filesystem = f"degraded: {settled.view_problem}"
    else:
        layers = ["namespaces"] + ["landlock"] * jail.landlock + ["seccomp"] * jail.seccomp
        filesystem = f"{ISOLATED} ({'+'.join(layers)})"
    return Enforcement(filesystem, ISOLATED if off is None else f"degraded: {off}", *extras)


def base_confinement(settings: Settings, proxy_socket: str | None) -> Confinement | None:
    """The strongest jail this host allows under the settings; None: no namespaces at all.
    The view is built and probed once per process and settings, not per call.

    Raises:
        ValueError: an extra sandbox path is malformed or forbidden.
    """
    jail = _settle(settings).jail
    if jail is None or proxy_socket is None or jail.network != NETWORK_NONE:
        return jail
    return dataclasses.replace(jail, network=NETWORK_PROXY, proxy_socket=proxy_socket)


def _settle(settings: Settings) -> _Settled:
    key = (
        settings.workspace.resolve(),
        settings.platform_home,
        settings.fs_isolation,
        settings.network_isolation,
        tuple(settings.sandbox_read_only_paths),
        tuple(settings.sandbox_read_write_paths),
        settings.sandbox_tmp_bytes,
        settings.rg_path,
    )
    found = _SETTLED.get(key)
    if found is None:
        found = _SETTLED[key] = _probed(settings)
    return found


def _probed(settings: Settings) -> _Settled:
    strongest = Confinement(
        settings.workspace.resolve(),
        None if settings.fs_isolation == "off" else _view(settings),
        NETWORK_HOST if _network_off(settings) else NETWORK_NONE,
        hidden=(str(settings.platform_home),),
        landlock=landlock.abi_version() > 0,
        seccomp=seccomp.unsupported() is None,
    )
    bare = dataclasses.replace(strongest, view=None)
    namespace_problem = probe(bare)
    if strongest.view is None:
        view_problem: str | None = "turned off (TOOLRUN_FS_ISOLATION=off)"
    else:
        view_problem = probe(strongest) if namespace_problem is None else namespace_problem
    if view_problem is None:
        return _Settled(strongest, None, None)
    return _Settled(bare if namespace_problem is None else None, view_problem, namespace_problem)


def _view(settings: Settings) -> View:
    space = settings.workspace.resolve()
    home = view_home(space)

    def extras(entries: list[str], writable: bool) -> list[Mount]:
        return extra_mounts(
            entries, writable=writable, home=home, platform_home=settings.platform_home
        )

    return build_view(
        home=home,
        installs=installs(settings.rg_path),
        read_only=extras(settings.sandbox_read_only_paths, False),
        read_write=extras(settings.sandbox_read_write_paths, True),
        scratch_bytes=settings.sandbox_tmp_bytes,
    )


def _network_off(settings: Settings) -> str | None:
    off = settings.network_isolation == "off"
    return "turned off (TOOLRUN_NETWORK_ISOLATION=off)" if off else None


def probe(jail: Confinement) -> str | None:
    """None when a program runs in `jail` here, else why it does not."""
    runner = ProcessRunner(
        cwd=jail.workspace,
        env={"PATH": "/usr/bin:/bin"},
        limits=ResourceLimits(),
        use_cgroups=False,
        jail=jail,
    )
    out, err = BoundedBytes(4096), BoundedBytes(4096)
    try:
        ended = runner.run(["true"], timeout_s=_PROBE_TIMEOUT_S, stdout=out, stderr=err)
    except SandboxViolation as exc:
        return str(exc)
    if ended.exit_code == 0:
        return None
    said = err.data().decode(errors="replace").strip().splitlines()
    return said[-1] if said else f"the probe exited with {ended.exit_code}"


@contextmanager
def call_confinement(
    settings: Settings, on_refused: Callable[[Refusal], None]
) -> Iterator[Confinement | None]:
    """The jail of one call's processes (None: unconfined, see `enforcement`), with an
    allowlisting proxy serving it while the call runs when some hosts are allowed.

    Raises:
        SandboxViolation: isolation is required and this host cannot provide it.
    """
    if settings.network_isolation == "off" or not settings.network_allowlist:
        yield _required(settings, base_confinement(settings, proxy_socket=None))
        return
    policy = NetworkPolicy(tuple(settings.network_allowlist))
    with AllowlistProxy(policy, on_refused) as socket_path:
        yield _required(settings, base_confinement(settings, proxy_socket=str(socket_path)))


def _required(settings: Settings, jail: Confinement | None) -> Confinement | None:
    """`jail`, unless isolation is required and it has no view (where no worker start
    refused it first: `toolrun call --local`, `toolrun mcp --local`): then nothing runs.

    Raises:
        SandboxViolation: TOOLRUN_FS_ISOLATION=required and the view is unavailable.
    """
    if settings.fs_isolation == "required" and (jail is None or jail.view is None):
        raise SandboxViolation(
            "TOOLRUN_FS_ISOLATION=required and tool processes cannot be isolated here: "
            f"{_settle(settings).view_problem or 'no namespaces'}"
        )
    return jail

"""A tool registry that includes the registered plugins and the tools of imported MCP
servers, kept current in every process.

Getters never touch the database. `refresh` loads the plugins again when they changed;
the first call in a process also starts a thread that refreshes every REFRESH_S. Callers
refresh explicitly when a tool is not found (a plugin registered a moment ago: the
lifecycle when it admits a call), and `find` checks before a plugin runs (a worker, an
approval: a plugin removed a moment ago is not run). The database engine is made in
each process, the wasmtime runtime when a process first loads a plugin; both are made again
after a fork (a prefork pool's new child), which also drops the parent's plugin tools:
wasmtime's threads do not survive a fork.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path

from sqlalchemy.engine import Engine

from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.errors import DuplicateTool
from toolrun.interop.mcp_imports import McpImports
from toolrun.interop.mcp_proxy import McpProxyTool
from toolrun.plugins.runtime import WasmRuntime
from toolrun.plugins.store import Plugin, PluginStore
from toolrun.plugins.tool import PluginTool
from toolrun.tools.base import Tool
from toolrun.tools.registry import ToolRegistry

REFRESH_S = 1.0
log = logging.getLogger(__name__)


def plugin_cache(settings: Settings) -> Path:
    """Where compiled plugin modules are kept on this machine."""
    return settings.platform_home / "plugin-cache"


class PluginRegistry(ToolRegistry):
    """`base` (built-in and module tools) plus the active plugins of `database_url`."""

    def __init__(self, base: ToolRegistry, database_url: str, cache_dir: Path | None) -> None:
        super().__init__(base.list())
        self._base = base.list()
        # What a forked child starts from (a copy: nothing here changes it in place).
        self._base_tools = {name: dict(versions) for name, versions in self._tools.items()}
        self._database_url = database_url
        self._cache_dir = cache_dir
        self._pid = -1
        self._engine: Engine | None = None
        self._runtime: WasmRuntime | None = None
        self._tools_by_key: dict[tuple[str, str], Tool] = {}  # (tool id, digest) → tool
        self._generation: int | None = None
        self._checked_at = 0.0
        self._lock = threading.RLock()
        self._refresher_pid = -1
        os.register_at_fork(after_in_child=_forget_plugins(weakref.ref(self)))

    @property
    def base(self) -> builtins.list[Tool]:
        """The tools that are not plugins."""
        return list(self._base)

    @property
    def store(self) -> PluginStore:
        self._own_process()
        assert self._engine is not None  # noqa: S101 - made by _own_process
        return PluginStore(self._engine)

    @property
    def runtime(self) -> WasmRuntime:
        """This process's wasmtime runtime, made on first use: a process that loads no
        plugin (no plugin registered) never builds an engine."""
        self._own_process()
        with self._lock:
            if self._runtime is None:
                self._runtime = WasmRuntime(self._cache_dir)
            return self._runtime

    def refresh(self, *, within_s: float = REFRESH_S) -> bool:
        """Load the plugins again if they changed and were not checked in the last
        `within_s` seconds (0: check now); True when it loaded them. Keeps a thread
        refreshing in the background from then on, in this process (started after this
        check, so that the caller's answer is its own)."""
        try:
            return self._reload_if_changed(within_s)
        finally:
            self._keep_refreshing()

    def find(self, name: str, version: str | None = None) -> Tool | None:
        """The tool as the database holds it now: on a miss, and for a plugin or an
        imported MCP tool (removed a moment ago?), the sources are checked first (one
        query when nothing changed); a built-in tool is answered from memory. Where the
        database cannot answer, a tool held in memory is the answer (as last loaded: a
        call is not lost to a database away for a moment); a miss raises."""
        found = self.get(name, version)
        if found is not None and not isinstance(found, (PluginTool, McpProxyTool)):
            return found
        try:
            self.refresh(within_s=0)
        except Exception as exc:
            if found is None:
                raise
            log.warning("plugins not checked (%r); %s as last loaded", exc, name)
            return found
        return self.get(name, version)

    def _reload_if_changed(self, within_s: float) -> bool:
        now = time.monotonic()
        if self._pid == os.getpid() and now - self._checked_at < within_s:
            return False
        with self._lock:
            self._checked_at = now
            store = self.store
            generation = store.generation()
            if generation == self._generation:
                return False
            self._load(store.active(), store)
            self._generation = generation
            return True

    def _load(self, plugins: Iterable[Plugin], store: PluginStore) -> None:
        tools: builtins.list[Tool] = list(self._base)
        for server in McpImports(store.engine).list():  # the MCP gateway's tools
            tools += [McpProxyTool(tool, server.endpoint) for tool in server.tools]
        kept: dict[tuple[str, str], Tool] = {}
        for plugin in plugins:
            key = (plugin.descriptor.tool_id, plugin.digest)
            tool = self._tools_by_key.get(key)
            if tool is None:
                wasm = store.module(plugin.digest)
                if wasm is None:
                    continue  # its module row is gone: nothing to run
                tool = PluginTool(plugin.descriptor, wasm, self.runtime, workspace=plugin.workspace)
            kept[key] = tool
            tools.append(tool)
        fresh = ToolRegistry()
        for tool in tools:
            with contextlib.suppress(DuplicateTool):  # a plugin never replaces a tool
                fresh.register(tool)
        self._tools_by_key = kept
        self._tools = fresh._tools  # one assignment: readers see the old set or the new one

    def _keep_refreshing(self) -> None:
        if self._refresher_pid == os.getpid():
            return
        with self._lock:
            if self._refresher_pid == os.getpid():
                return
            self._refresher_pid = os.getpid()
            threading.Thread(
                target=_refresh_forever, args=(weakref.ref(self),), name="plugins", daemon=True
            ).start()

    def _forked(self) -> None:
        """In a new child: only the base tools until the next refresh (the plugin tools
        hold the parent's runtime); no refreshing thread yet. Runs in every child forked
        from this process, sandboxed starts' too: a few assignments, nothing more."""
        self._tools = self._base_tools
        self._refresher_pid = -1
        self._lock = threading.RLock()

    def _own_process(self) -> None:
        """Make the database engine here (and forget the parent's runtime) if this process
        has none of its own yet."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._engine = open_database(self._database_url)
            self._runtime = None
            self._tools_by_key = {}
            self._generation = None
            self._pid = os.getpid()


def _forget_plugins(ref: weakref.ref[PluginRegistry]) -> Callable[[], None]:
    def forget() -> None:
        registry = ref()
        if registry is not None:
            registry._forked()

    return forget


def _refresh_forever(ref: weakref.ref[PluginRegistry]) -> None:
    """Refresh the registry every REFRESH_S until it is gone (or the process forks: the
    thread does not exist in the child); the call that started it has just refreshed."""
    while True:
        time.sleep(REFRESH_S)
        registry = ref()
        if registry is None:
            return
        try:
            registry.refresh(within_s=REFRESH_S / 2)
        except Exception as exc:  # the database away for a moment: the next round retries
            log.warning("refreshing plugins failed: %r", exc)
        del registry

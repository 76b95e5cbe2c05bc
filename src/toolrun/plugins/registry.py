"""A tool registry that includes the registered plugins and the tools of imported MCP
servers, kept current in every process.

The plugins are loaded again when they change in the database: checked at most every
REFRESH_S, and at once when a tool is not found (a plugin registered a moment ago; the
API checks every call's tool before it is queued, so workers rarely miss). The
database engine and the wasmtime runtime are made on first use in each process, and made
again after a fork (a prefork pool's new child): wasmtime's threads do not survive one.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import threading
import time
from collections.abc import Iterable
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


def plugin_cache(settings: Settings) -> Path:
    """Where compiled plugin modules are kept on this machine."""
    return settings.platform_home / "plugin-cache"


class PluginRegistry(ToolRegistry):
    """`base` (built-in and module tools) plus the active plugins of `database_url`."""

    def __init__(self, base: ToolRegistry, database_url: str, cache_dir: Path | None) -> None:
        super().__init__(base.list())
        self._base = base.list()
        self._database_url = database_url
        self._cache_dir = cache_dir
        self._pid = -1
        self._engine: Engine | None = None
        self._runtime: WasmRuntime | None = None
        self._tools_by_key: dict[tuple[str, str], Tool] = {}  # (tool id, digest) → tool
        self._generation: int | None = None
        self._checked_at = 0.0
        self._lock = threading.RLock()

    @property
    def base(self) -> builtins.list[Tool]:
        """The tools that are not plugins."""
        return list(self._base)

    def get(self, name: str, version: str | None = None) -> Tool | None:
        self.refresh()
        found = super().get(name, version)
        if found is None and self.refresh(within_s=0):  # one query: a plugin just registered?
            found = super().get(name, version)
        return found

    def list(self) -> builtins.list[Tool]:
        self.refresh()
        return super().list()

    def versions(self, name: str) -> builtins.list[Tool]:
        self.refresh()
        return super().versions(name)

    def names(self) -> builtins.list[str]:
        self.refresh()
        return super().names()

    @property
    def store(self) -> PluginStore:
        self._own_process()
        assert self._engine is not None  # noqa: S101 - made by _own_process
        return PluginStore(self._engine)

    @property
    def runtime(self) -> WasmRuntime:
        self._own_process()
        assert self._runtime is not None  # noqa: S101 - made by _own_process
        return self._runtime

    def refresh(self, *, within_s: float = REFRESH_S) -> bool:
        """Load the plugins again if they changed and were not checked in the last
        `within_s` seconds (0: check now); True when it loaded them."""
        now = time.monotonic()
        if self._pid == os.getpid() and now - self._checked_at < within_s:
            return False  # a forked child must not wait: its tools hold the parent's runtime
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

    def _own_process(self) -> None:
        """Make the engine and runtime here if this process has none of its own yet."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._engine = open_database(self._database_url)
            self._runtime = WasmRuntime(self._cache_dir)
            self._tools_by_key = {}
            self._generation = None
            self._pid = os.getpid()

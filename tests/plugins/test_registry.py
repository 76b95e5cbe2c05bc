"""Registered plugins reach every registry through the database."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from tests.plugins.conftest import EXAMPLES
from toolrun.errors import DuplicateTool
from toolrun.plugins.module import InvalidPlugin
from toolrun.plugins.registry import REFRESH_S, PluginRegistry
from toolrun.plugins.store import PluginStore
from toolrun.plugins.tool import PluginTool, load_plugin_descriptor
from toolrun.tools.registry import ToolRegistry


def registry(database_url: str) -> PluginRegistry:
    return PluginRegistry(ToolRegistry.with_builtins(), database_url, None)


def described(**changes: object) -> dict[str, object]:
    return {**json.loads((EXAMPLES / "wordcount" / "wordcount.json").read_text()), **changes}


def test_a_plugin_registered_in_one_process_is_found_by_a_refresh_in_another(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    api, worker = registry(url), registry(url)
    assert worker.get("wordcount") is None

    for version in ("1.0.0", "1.1.0"):
        descriptor, access = load_plugin_descriptor(described(version=version))
        api.store.register(descriptor, access, built["wordcount"])
        if version == "1.0.0":  # before any refresh (no refreshing thread yet)
            assert worker.get("wordcount", version) is None  # a getter never reads the database
        worker.refresh(within_s=0)  # what a caller does on a miss
        found = worker.get("wordcount", version)
        assert found is not None
        assert found.descriptor.version == version

    assert [tool.descriptor.version for tool in worker.versions("wordcount")] == ["1.0.0", "1.1.0"]


def test_after_a_first_refresh_a_thread_keeps_the_registry_current(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    api, worker = registry(url), registry(url)
    worker.refresh(within_s=0)
    descriptor, access = load_plugin_descriptor(described())

    api.store.register(descriptor, access, built["wordcount"])

    deadline = time.monotonic() + 10 * REFRESH_S
    while worker.get("wordcount") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker.get("wordcount") is not None


def test_removed_versions_leave_and_a_version_registers_once(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    plugins = registry(url)
    descriptor, access = load_plugin_descriptor(described())
    plugins.store.register(descriptor, access, built["wordcount"])
    with pytest.raises(DuplicateTool):
        plugins.store.register(descriptor, access, built["linefilter"])

    assert plugins.store.remove("wordcount", "9.9.9") == []
    assert plugins.store.remove("wordcount") == ["1.0.0"]
    plugins.refresh(within_s=0)

    assert plugins.get("wordcount") is None
    assert "wordcount" not in plugins.names()
    plugins.store.register(descriptor, access, built["wordcount"])  # it may come back
    plugins.refresh(within_s=0)
    assert plugins.get("wordcount") is not None


def test_find_checks_the_database_before_a_plugin_runs(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    """A worker holding the plugin in memory does not run it once another process has
    removed it, even before its refreshing thread's next round."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    api, worker = registry(url), registry(url)
    descriptor, access = load_plugin_descriptor(described())
    api.store.register(descriptor, access, built["wordcount"])
    assert isinstance(worker.find("wordcount"), PluginTool)  # loaded on the miss

    assert api.store.remove("wordcount") == ["1.0.0"]

    assert worker.get("wordcount") is not None  # memory: still there until a refresh
    assert worker.find("wordcount") is None
    assert worker.find("read") is not None  # a built-in tool: from memory


def test_find_runs_the_plugin_as_last_loaded_while_the_database_is_away(
    tmp_path: Path, built: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's call is not lost (left running) to a database away for a moment."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    worker = registry(url)
    descriptor, access = load_plugin_descriptor(described())
    worker.store.register(descriptor, access, built["wordcount"])
    assert isinstance(worker.find("wordcount"), PluginTool)

    def away(_: object) -> int:
        raise OperationalError("SELECT", {}, Exception("the database is away"))

    monkeypatch.setattr(PluginStore, "generation", away)

    assert isinstance(worker.find("wordcount"), PluginTool)
    with pytest.raises(OperationalError):  # a miss cannot be answered from memory
        worker.find("linefilter")


def test_a_plugin_never_replaces_a_tool_that_is_not_one(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    plugins = registry(url)
    read = ToolRegistry.with_builtins().get("read")
    assert read is not None
    descriptor, access = load_plugin_descriptor(
        described(name="read", version=read.descriptor.version)
    )
    plugins.store.register(descriptor, access, built["wordcount"])  # the API refuses this name

    plugins.refresh(within_s=0)

    found = plugins.get("read")
    assert found is not None
    assert not isinstance(found, PluginTool)
    assert type(found) is type(read)


def test_a_forked_child_loads_its_own_plugins_at_once(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    """The parent's tools hold its runtime, whose epoch ticker thread is not in the
    child: with them, a child's plugin calls would have no wall-time limit."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    plugins = registry(url)
    descriptor, access = load_plugin_descriptor(described())
    plugins.store.register(descriptor, access, built["wordcount"])
    plugins.refresh(within_s=0)
    parent_tool = plugins.get("wordcount")
    assert isinstance(parent_tool, PluginTool)
    read_end, write_end = os.pipe()

    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's exit hooks
        try:
            dropped = plugins.get("wordcount") is None  # the parent's tools are gone
            reloaded = plugins.refresh()  # within a second of the parent's check
            tool = plugins.get("wordcount")
            own = isinstance(tool, PluginTool) and tool.runtime is not parent_tool.runtime
            os.write(write_end, b"ok" if dropped and reloaded and own else b"stale")
        finally:
            os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 16)
    os.close(read_end)
    os.waitpid(pid, 0)

    assert answer == b"ok"


def test_a_removal_stamped_by_a_clock_behind_is_still_seen(
    tmp_path: Path, built: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another host, its clock behind this one's, removes the plugin."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    api, worker = registry(url), registry(url)
    descriptor, access = load_plugin_descriptor(described())
    monkeypatch.setattr("toolrun.plugins.store.time.time", lambda: 2_000_000_000.0)
    api.store.register(descriptor, access, built["wordcount"])
    worker.refresh(within_s=0)
    assert worker.get("wordcount") is not None

    monkeypatch.setattr("toolrun.plugins.store.time.time", lambda: 1_000_000_000.0)
    assert api.store.remove("wordcount") == ["1.0.0"]
    worker.refresh(within_s=0)

    assert worker.get("wordcount", "1.0.0") is None


def test_a_plugin_cannot_pass_for_an_imported_mcp_tool() -> None:
    # imported_from waives the examples rule: only the gateway sets it.
    with pytest.raises(InvalidPlugin, match="imported_from is set by the MCP gateway only"):
        load_plugin_descriptor({**described(), "imported_from": "evil", "examples": []})

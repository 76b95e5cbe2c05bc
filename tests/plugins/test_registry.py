"""Registered plugins reach every registry through the database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.conftest import EXAMPLES
from toolrun.errors import DuplicateTool
from toolrun.plugins.registry import PluginRegistry
from toolrun.plugins.tool import PluginTool, load_plugin_descriptor
from toolrun.tools.registry import ToolRegistry


def registry(database_url: str) -> PluginRegistry:
    return PluginRegistry(ToolRegistry.with_builtins(), database_url, None)


def described(**changes: object) -> dict[str, object]:
    return {**json.loads((EXAMPLES / "wordcount" / "wordcount.json").read_text()), **changes}


def test_a_plugin_registered_in_one_process_is_found_at_once_in_another(
    tmp_path: Path, built: dict[str, bytes]
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    api, worker = registry(url), registry(url)
    assert worker.get("wordcount") is None

    for version in ("1.0.0", "1.1.0"):
        descriptor, access = load_plugin_descriptor(described(version=version))
        api.store.register(descriptor, access, built["wordcount"])
        found = worker.get("wordcount", version)  # a miss looks again at once
        assert found is not None
        assert found.descriptor.version == version

    assert [tool.descriptor.version for tool in worker.versions("wordcount")] == ["1.0.0", "1.1.0"]


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
    assert plugins.get("wordcount") is not None


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

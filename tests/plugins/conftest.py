"""Plugins built from source (examples/plugins, with zig from the ziglang package) and a
runtime for them."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from toolrun.plugins import WasmRuntime
from toolrun.plugins.tool import PluginTool, load_plugin_descriptor

EXAMPLES = Path(__file__).parents[2] / "examples" / "plugins"


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("plugin_build", EXAMPLES / "build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_examples(out: Path) -> dict[str, bytes]:
    """Each example plugin's module, compiled now from its C source into `out`."""
    script = _build_script()
    return {source.stem: script.build(source, out).read_bytes() for source in script.sources()}


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return build_examples(tmp_path_factory.mktemp("plugins"))


@pytest.fixture(scope="session")
def runtime() -> Iterator[WasmRuntime]:
    runtime = WasmRuntime()
    yield runtime
    runtime.close()


def example_tool(name: str, built: dict[str, bytes], runtime: WasmRuntime) -> PluginTool:
    descriptor, access = load_plugin_descriptor(
        json.loads((EXAMPLES / name / f"{name}.json").read_text())
    )
    return PluginTool(descriptor, built[name], runtime, workspace=access)

"""Plugins under their caps, and the example plugins as tools."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
import wasmtime

from tests.plugins.conftest import EXAMPLES, example_tool
from toolrun.config import Settings
from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.plugins import InvalidPlugin, PluginLimits, PluginTool, WasmRuntime
from toolrun.plugins.tool import WorkspaceAccess, load_plugin_descriptor
from toolrun.tools.base import ToolContext

LOOP = '(module (memory (export "memory") 1) (func (export "_start") (loop br 0)))'
MEMORY_BOMB = """(module (memory (export "memory") 1)
  (func (export "_start")
    (loop (br_if 0 (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    unreachable))"""
FLOOD = """(module
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "%s")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 1024))
    (loop (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) (br 0))))
""" % ("x" * 1024)


def module(runtime: WasmRuntime, text: str) -> wasmtime.Module:
    return runtime.module(bytes(wasmtime.wat2wasm(text)))


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    return ToolContext.create(Settings(workspace=tmp_path))


def test_an_infinite_loop_ends_at_the_time_limit(runtime: WasmRuntime) -> None:
    ended = runtime.run(module(runtime, LOOP), b"", PluginLimits(time_s=0.3, fuel=10**15))

    assert ended.limit == "time limit exceeded: ran longer than 0.3 s"
    assert ended.exit_code is None


def test_an_infinite_loop_ends_when_its_fuel_is_spent(runtime: WasmRuntime) -> None:
    ended = runtime.run(module(runtime, LOOP), b"", PluginLimits(fuel=5_000_000))

    assert ended.limit == "CPU limit exceeded: 5000000 units of fuel used"
    assert ended.fuel_used == 5_000_000


def test_a_memory_bomb_ends_at_the_memory_cap(runtime: WasmRuntime) -> None:
    ended = runtime.run(module(runtime, MEMORY_BOMB), b"", PluginLimits(memory_bytes=16 * 2**20))

    assert ended.limit == f"memory limit exceeded: {16 * 2**20} bytes"


def test_an_output_flood_is_cut_at_the_cap(runtime: WasmRuntime) -> None:
    ended = runtime.run(module(runtime, FLOOD), b"", PluginLimits(time_s=0.5, stdout_bytes=4096))

    assert ended.limit == "output limit exceeded: more than 4096 bytes on stdout"
    assert len(ended.stdout) == 4096


def test_the_runtime_keeps_serving_after_each_limit(
    runtime: WasmRuntime, built: dict[str, bytes], context: ToolContext
) -> None:
    for text in (LOOP, MEMORY_BOMB, FLOOD):
        runtime.run(module(runtime, text), b"", PluginLimits(time_s=0.2, memory_bytes=8 * 2**20))
    tool = example_tool("wordcount", built, runtime)

    assert tool.run({"text": "still here"}, context).output == {"words": 2, "lines": 1, "chars": 10}


def test_limits_surface_as_tool_errors(
    built: dict[str, bytes], runtime: WasmRuntime, context: ToolContext
) -> None:
    descriptor, _ = load_plugin_descriptor(
        json.loads((EXAMPLES / "wordcount" / "wordcount.json").read_text())
    )
    tool = PluginTool(descriptor, built["wordcount"], runtime, limits=PluginLimits(fuel=1000))

    with pytest.raises(ToolTimeout, match="CPU limit exceeded"):
        tool.run({"text": "a b c"}, context)


@pytest.mark.parametrize("name", ["wordcount", "linefilter", "filestat"])
def test_each_example_plugin_answers_its_documented_examples(
    name: str, built: dict[str, bytes], runtime: WasmRuntime, tmp_path: Path
) -> None:
    (tmp_path / "README.md").write_text("# Title\n\ntext\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    context = ToolContext.create(Settings(workspace=tmp_path))
    tool = example_tool(name, built, runtime)

    for example in tool.descriptor.examples:
        if "missing" in example.description:
            with pytest.raises(ToolExecutionError, match="cannot open the file"):
                tool.run(example.arguments, context)
            continue
        output = tool.run(example.arguments, context).output
        jsonschema.validate(output, tool.descriptor.returns)


def test_example_outputs(
    built: dict[str, bytes], runtime: WasmRuntime, context: ToolContext
) -> None:
    lines = example_tool("linefilter", built, runtime).run(
        {"text": 'ok\nERROR "disk"\nok\nERROR net', "contains": "ERROR"}, context
    )
    stat = example_tool("filestat", built, runtime).run({"path": "notes.txt"}, context)

    assert lines.output == {"lines": ['ERROR "disk"', "ERROR net"], "count": 2}
    assert stat.output == {"path": "notes.txt", "bytes": 14, "lines": 3}
    assert lines.metadata["fuel_used"] > 0


def test_a_plugin_without_the_workspace_cannot_read_a_file(
    built: dict[str, bytes], runtime: WasmRuntime, context: ToolContext
) -> None:
    descriptor, _ = load_plugin_descriptor(
        json.loads((EXAMPLES / "filestat" / "filestat.json").read_text())
    )
    blind = PluginTool(descriptor, built["filestat"], runtime, workspace=WorkspaceAccess.NONE)

    with pytest.raises(ToolExecutionError, match="cannot open the file"):
        blind.run({"path": "notes.txt"}, context)


@pytest.mark.parametrize("path", ["../outside.txt", "../../../../etc/passwd", "link-out"])
def test_a_plugin_with_the_workspace_cannot_leave_it(
    path: str, built: dict[str, bytes], runtime: WasmRuntime, tmp_path: Path
) -> None:
    space = tmp_path / "space"
    space.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    os.symlink(tmp_path / "outside.txt", space / "link-out")
    context = ToolContext.create(Settings(workspace=space))

    with pytest.raises(ToolExecutionError, match="cannot open the file"):
        example_tool("filestat", built, runtime).run({"path": path}, context)


def test_workspace_write_access_needs_the_read_write_level(
    built: dict[str, bytes], runtime: WasmRuntime
) -> None:
    descriptor, _ = load_plugin_descriptor(
        json.loads((EXAMPLES / "filestat" / "filestat.json").read_text())
    )

    with pytest.raises(InvalidPlugin, match="workspace access write needs permission read_write"):
        PluginTool(descriptor, built["filestat"], runtime, workspace=WorkspaceAccess.WRITE)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"workspace": "all"}, "workspace must be none, read or write"),
        ({"examples": []}, "at least 3 examples"),
    ],
)
def test_bad_plugin_descriptors_are_refused(change: dict[str, object], message: str) -> None:
    data = {**json.loads((EXAMPLES / "wordcount" / "wordcount.json").read_text()), **change}

    with pytest.raises(Exception, match=message):
        load_plugin_descriptor(data)


STDERR_BURST = """(module
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "%s")
  (func (export "_start") (local $left i32)
    (local.set $left (i32.const 100))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 1024))
    (loop
      (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
      (local.set $left (i32.sub (local.get $left) (i32.const 1)))
      (br_if 0 (local.get $left)))))
""" % ("e" * 1024)


def test_stderr_past_its_cap_is_cut_and_the_call_goes_on(runtime: WasmRuntime) -> None:
    ended = runtime.run(module(runtime, STDERR_BURST), b"", PluginLimits(stderr_bytes=4096))

    assert (ended.exit_code, ended.limit) == (0, None)
    assert ended.stderr == b"e" * 4096


def test_compiled_modules_in_memory_are_bounded(
    runtime: WasmRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("toolrun.plugins.runtime.MODULES_IN_MEMORY", 2)
    texts = [f'(module (func (export "_start")) (func (export "f{i}")))' for i in range(3)]
    before = runtime.compiles
    for text in [*texts, texts[0]]:  # the first was dropped for the third
        module(runtime, text)

    assert runtime.compiles - before == 4
    module(runtime, texts[2])  # still in memory
    assert runtime.compiles - before == 4


SLEEPER = """(module
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (i64.store (i32.const 24) (i64.const 3000000000))  ;; a clock subscription: 3 s
    (call $exit (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))))
"""


def test_a_plugin_cannot_sleep_past_its_time_limit(runtime: WasmRuntime) -> None:
    """A host-side sleep is out of reach of epoch interruption: waiting is refused."""
    ended = runtime.run(module(runtime, SLEEPER), b"", PluginLimits(time_s=0.5))

    assert ended.exit_code == 52  # ENOSYS, at once, instead of 3 s asleep

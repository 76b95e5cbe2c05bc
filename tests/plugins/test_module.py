"""Which modules can be plugins: the checks at registration."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from toolrun.plugins import InvalidPlugin, WasmRuntime, check_module

ENGINE = WasmRuntime().engine  # configured as every plugin call's engine


def wat(text: str) -> bytes:
    return bytes(wasmtime.wat2wasm(text))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"hello", "not a WebAssembly module (it does not start with \\0asm)"),
        (b"(module)", "not a WebAssembly module"),  # text format is not accepted either
        (b"\0asm\x01\0\0\0\xff", "the module does not compile: "),
        (
            wat('(module (import "env" "f" (func)) (func (export "_start")))'),
            "the module imports env.f: a plugin may import only WASI (wasi_snapshot_preview1)",
        ),
        (
            wat('(module (func (export "main")))'),
            "the module does not export _start: build it as a WASI command",
        ),
        (wat('(module (memory (export "_start") 1))'), "the module does not export _start"),
        (
            wat('(module (func (export "_start") (param i32)))'),
            "_start must take no parameters and return nothing",
        ),
        (
            # A memory cap applies to each memory: eight would have eight caps.
            wat('(module (memory 1) (memory 1) (func (export "_start")))'),
            "the module has more than one linear memory: a plugin may have only one",
        ),
    ],
    ids=[
        "text",
        "wat-text",
        "garbage",
        "foreign-import",
        "no-start",
        "start-not-func",
        "start-args",
        "two-memories",
    ],
)
def test_modules_that_cannot_be_plugins_are_refused_with_the_reason(
    data: bytes, message: str
) -> None:
    with pytest.raises(InvalidPlugin) as caught:
        check_module(ENGINE, data)

    assert str(caught.value).startswith(message)


def test_a_wasi_command_passes(built: dict[str, bytes]) -> None:
    module = check_module(ENGINE, built["wordcount"])

    assert {item.module for item in module.imports} == {"wasi_snapshot_preview1"}


def test_the_compiled_module_is_cached_on_disk_and_survives_a_restart(
    built: dict[str, bytes], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = WasmRuntime(cache)
    first.module(built["wordcount"])
    first.module(built["wordcount"])
    first.close()
    second = WasmRuntime(cache)  # a restarted worker
    second.module(built["wordcount"])
    second.close()

    assert (first.compiles, second.compiles) == (1, 0)
    assert len(list(cache.glob("*.cwasm"))) == 1


def test_a_damaged_cache_entry_is_compiled_again(built: dict[str, bytes], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    WasmRuntime(cache).module(built["wordcount"])
    (entry,) = cache.glob("*.cwasm")
    entry.write_bytes(b"not a compiled module")
    runtime = WasmRuntime(cache)

    runtime.module(built["wordcount"])

    assert runtime.compiles == 1

"""What a plugin module must be: WebAssembly that compiles, exports ``_start`` (a WASI
command) and imports nothing but WASI preview 1."""

from __future__ import annotations

import wasmtime

from toolrun.errors import ToolrunError

WASM_MAGIC = b"\0asm"
WASI_MODULE = "wasi_snapshot_preview1"


class InvalidPlugin(ToolrunError):
    """A module (or descriptor) that cannot be a plugin; the message says why."""


def check_module(engine: wasmtime.Engine, data: bytes) -> wasmtime.Module:
    """The compiled module, once it passes every check.

    Raises:
        InvalidPlugin: not WebAssembly, does not compile, imports outside WASI, or no
            ``_start`` taking and returning nothing.
    """
    if not data.startswith(WASM_MAGIC):
        raise InvalidPlugin("not a WebAssembly module (it does not start with \\0asm)")
    try:
        module = wasmtime.Module(engine, data)
    except wasmtime.WasmtimeError as exc:
        if "multiple memories" in str(exc):
            raise InvalidPlugin(
                "the module has more than one linear memory: a plugin may have only one"
            ) from exc
        raise InvalidPlugin(f"the module does not compile: {_first_line(exc)}") from exc
    foreign = sorted(
        f"{item.module}.{item.name}" for item in module.imports if item.module != WASI_MODULE
    )
    if foreign:
        raise InvalidPlugin(
            f"the module imports {', '.join(foreign)}: a plugin may import only WASI "
            f"({WASI_MODULE})"
        )
    start = next((item.type for item in module.exports if item.name == "_start"), None)
    if not isinstance(start, wasmtime.FuncType):
        raise InvalidPlugin("the module does not export _start: build it as a WASI command")
    if start.params or start.results:
        raise InvalidPlugin("_start must take no parameters and return nothing")
    return module


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__

"""Custom tools as WebAssembly plugins: WASI command modules run by wasmtime under fuel,
memory, wall-time and output caps (ABI: docs/plugins.md)."""

from toolrun.plugins.module import InvalidPlugin, check_module
from toolrun.plugins.runtime import PluginLimits, PluginRun, WasmRuntime
from toolrun.plugins.tool import PluginTool, WorkspaceAccess

__all__ = [
    "InvalidPlugin",
    "PluginLimits",
    "PluginRun",
    "PluginTool",
    "WasmRuntime",
    "WorkspaceAccess",
    "check_module",
]

"""A plugin as a tool: arguments as JSON on stdin, the output as JSON on stdout."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.permissions.levels import PermissionLevel
from toolrun.plugins.module import InvalidPlugin
from toolrun.plugins.runtime import PluginLimits, PluginRun, WasmRuntime
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor

DIAGNOSTIC_CHARS = 2000
MAX_TIME_LIMIT_S = 300.0  # below every Celery and visibility limit the platform sets


class WorkspaceAccess(StrEnum):
    """What of the workspace a plugin sees, at /workspace."""

    NONE = "none"
    READ = "read"  # needs permission read_only or above
    WRITE = "write"  # needs read_write or above


_LEAST_LEVEL = {
    WorkspaceAccess.NONE: PermissionLevel.READ_ONLY,
    WorkspaceAccess.READ: PermissionLevel.READ_ONLY,
    WorkspaceAccess.WRITE: PermissionLevel.READ_WRITE,
}


def load_plugin_descriptor(data: object) -> tuple[ToolDescriptor, WorkspaceAccess]:
    """A plugin's descriptor: a tool descriptor's JSON plus an optional ``"workspace"``
    (none, read or write; default none).

    Raises:
        InvalidDescriptor: every problem of the descriptor.
        InvalidPlugin: an unknown workspace access.
    """
    if not isinstance(data, dict):
        raise InvalidPlugin("a plugin descriptor must be a JSON object")
    fields = dict(data)
    access = fields.pop("workspace", WorkspaceAccess.NONE.value)
    if access not in {member.value for member in WorkspaceAccess}:
        raise InvalidPlugin(f"workspace must be none, read or write, got {access!r}")
    if "imported_from" in fields:
        raise InvalidPlugin("imported_from is set by the MCP gateway only, not by a plugin")
    descriptor = ToolDescriptor.parse(fields)
    if descriptor.time_limit_s > MAX_TIME_LIMIT_S:
        raise InvalidPlugin(f"time_limit_s must be at most {MAX_TIME_LIMIT_S:g} for a plugin")
    return descriptor, WorkspaceAccess(access)


class PluginTool(Tool):
    """Runs a WASI command module per call (see docs/plugins.md)."""

    starts_processes = False  # the module runs in this process, in wasmtime

    def __init__(
        self,
        descriptor: ToolDescriptor,
        wasm: bytes,
        runtime: WasmRuntime,
        *,
        workspace: WorkspaceAccess = WorkspaceAccess.NONE,
        limits: PluginLimits | None = None,
    ) -> None:
        """Raises InvalidPlugin: a bad module, or workspace access above its level."""
        if not descriptor.permission.allows(_LEAST_LEVEL[workspace]):
            raise InvalidPlugin(
                f"workspace access {workspace} needs permission "
                f"{_LEAST_LEVEL[workspace]} or above, the descriptor says {descriptor.permission}"
            )
        self.descriptor = descriptor
        self.runtime = runtime
        self.module = runtime.module(wasm)  # checked and compiled (or loaded) once, here
        self.workspace = workspace
        self.limits = limits or PluginLimits(time_s=descriptor.time_limit_s)
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        stdin = json.dumps(arguments).encode()
        if len(stdin) > self.limits.stdin_bytes:
            raise ToolExecutionError(
                f"arguments are {len(stdin)} bytes as JSON; a plugin takes at most "
                f"{self.limits.stdin_bytes}"
            )
        ended = self.runtime.run(
            self.module,
            stdin,
            self.limits,
            workspace=None if self.workspace is WorkspaceAccess.NONE else ctx.workspace.root,
            writable=self.workspace is WorkspaceAccess.WRITE,
        )
        return ToolOutput(_output(ended), {"fuel_used": ended.fuel_used})


def _output(ended: PluginRun) -> Any:
    """The plugin's JSON output, or the error it ended with."""
    diagnostics = ended.stderr.decode(errors="replace")[-DIAGNOSTIC_CHARS:].strip()
    if ended.limit is not None:
        error = ToolTimeout if ended.limit.startswith(("time", "CPU")) else ToolExecutionError
        raise error(ended.limit + _tail(diagnostics))
    if ended.trap is not None:
        raise ToolExecutionError(f"the plugin crashed: {ended.trap}" + _tail(diagnostics))
    if ended.exit_code != 0:
        raise ToolExecutionError(
            f"the plugin exited with code {ended.exit_code}" + _tail(diagnostics)
        )
    try:
        output = json.loads(ended.stdout)
    except ValueError as exc:
        shown = ended.stdout[:200].decode(errors="replace")
        raise ToolExecutionError(f"the plugin's output is not JSON: {shown!r}") from exc
    if isinstance(output, dict) and set(output) == {"error"}:
        raise ToolExecutionError(str(output["error"]) + _tail(diagnostics))
    return output


def _tail(diagnostics: str) -> str:
    return f"; stderr: {diagnostics}" if diagnostics else ""

"""Plugin routes (admin): register a WebAssembly module as a tool, unregister it.

A registered plugin is stored in the database; every API process and worker loads it from
there within a second, or at once when a call names it (`plugins.registry`).
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from toolrun.api.auth import Admin
from toolrun.api.state import ApiState, get_state
from toolrun.errors import DuplicateTool, InvalidDescriptor
from toolrun.plugins.module import InvalidPlugin
from toolrun.plugins.registry import PluginRegistry
from toolrun.plugins.tool import PluginTool, load_plugin_descriptor
from toolrun.tools.model import ToolDescriptor

router = APIRouter(prefix="/v1/tools", tags=["plugins"])
State = Annotated[ApiState, Depends(get_state)]


class Registered(BaseModel):
    tool: ToolDescriptor
    workspace: str
    digest: str  # SHA-256 of the module


class Removed(BaseModel):
    name: str
    removed: list[str]  # versions


@router.post("", status_code=201, responses={403: {}, 409: {}, 422: {}})
async def register_plugin(
    state: State,
    admin: Admin,
    module: Annotated[UploadFile, File(description="The WebAssembly module (WASI command).")],
    descriptor: Annotated[str, Form(description="The descriptor, JSON (docs/plugins.md).")],
) -> Registered:
    """Register a plugin version: the descriptor is checked like a built-in's, the module
    must compile, export _start and import only WASI. Other versions stay."""
    registry = _plugins(state)
    try:
        parsed, access = load_plugin_descriptor(json.loads(descriptor))
    except ValueError as exc:
        raise HTTPException(422, f"descriptor is not valid JSON: {exc}") from exc
    except (InvalidDescriptor, InvalidPlugin) as exc:
        raise HTTPException(422, str(exc)) from exc
    if parsed.name in {tool.descriptor.name for tool in registry.base}:
        raise HTTPException(409, f"{parsed.name} is a built-in tool; a plugin needs its own name")
    wasm = await module.read()
    try:  # compiles it (and fills this process's cache) before anything is stored
        await run_in_threadpool(PluginTool, parsed, wasm, registry.runtime, workspace=access)
        digest = await run_in_threadpool(registry.store.register, parsed, access, wasm, admin.name)
    except InvalidPlugin as exc:
        raise HTTPException(422, str(exc)) from exc
    except DuplicateTool as exc:
        raise HTTPException(409, str(exc)) from exc
    await run_in_threadpool(registry.refresh, within_s=0)
    return Registered(tool=parsed, workspace=access.value, digest=digest)


@router.delete("/{name}", responses={403: {}, 404: {}, 409: {}})
async def remove_plugin(
    name: str,
    state: State,
    admin: Admin,
    version: Annotated[
        str | None, Query(max_length=64, description="Default: every version.")
    ] = None,
) -> Removed:
    """Unregister a plugin version (or all of them). Calls still queued for it end with an
    error naming the tool; `GET /v1/tools` no longer lists it."""
    registry = _plugins(state)
    if name in {tool.descriptor.name for tool in registry.base}:
        raise HTTPException(409, f"{name} is a built-in tool; only plugins can be removed")
    removed = await run_in_threadpool(registry.store.remove, name, version)
    if not removed:
        wanted = name + (f"@{version}" if version else "")
        raise HTTPException(404, f"no registered plugin {wanted}")
    await run_in_threadpool(registry.refresh, within_s=0)
    await run_in_threadpool(_warn_users, state, name, removed)
    return Removed(name=name, removed=removed)


def _warn_users(state: ApiState, name: str, versions: list[str]) -> None:
    """Warn the agents that called these versions lately, and those whose running DAG
    runs still have a node on the tool."""
    shown = f"{name}@{', '.join(versions)}"
    since = time.time() - state.settings.plugin_usage_days * 86400
    callers = state.history.callers(name, versions, since)
    state.warnings.warn(
        callers, "tool_removed", f"plugin {shown} was removed; calls to it now fail"
    )
    for run_id, agent_id, nodes in state.runs.waiting_on(name):
        if agent_id is not None:
            state.warnings.warn(
                [agent_id],
                "tool_removed",
                f"plugin {shown} was removed; DAG run {run_id} still has nodes on "
                f"it: {', '.join(nodes)}",
            )


def _plugins(state: ApiState) -> PluginRegistry:
    registry: Any = state.registry
    if not isinstance(registry, PluginRegistry):  # create_app always makes one
        raise HTTPException(503, "this API has no plugin registry")
    return registry

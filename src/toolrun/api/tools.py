"""Tool routes: the registry, read-only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import PlainTextResponse

from toolrun.api.state import ApiState, get_state
from toolrun.tools.docs import render_markdown
from toolrun.tools.model import ToolDescriptor

router = APIRouter(prefix="/v1/tools", tags=["tools"])
State = Annotated[ApiState, Depends(get_state)]
Version = Annotated[str | None, Query(max_length=64, description="Default: the newest version.")]


@router.get("")
async def list_tools(state: State) -> list[ToolDescriptor]:
    """Every registered tool version."""
    return [tool.descriptor for tool in state.registry.list()]


@router.get("/{name}", responses={404: {"description": "No such tool or version"}})
async def get_tool(name: str, state: State, version: Version = None) -> ToolDescriptor:
    """One tool's descriptor."""
    tool = state.registry.get(name, version)
    if tool is None:
        raise HTTPException(404, state.registry.missing(name, version))
    return tool.descriptor


@router.get(
    "/{name}/docs",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}}, 404: {"description": "No such tool"}},
)
async def get_tool_docs(name: str, state: State, version: Version = None) -> PlainTextResponse:
    """One tool's documentation as Markdown."""
    tool = state.registry.get(name, version)
    if tool is None:
        raise HTTPException(404, state.registry.missing(name, version))
    return PlainTextResponse(render_markdown(tool.descriptor), media_type="text/markdown")

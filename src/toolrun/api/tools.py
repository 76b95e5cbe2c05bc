"""Tool routes: the registry as the calling agent sees it (its tool set), read-only."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from toolrun.api.auth import Agent
from toolrun.api.state import ApiState, get_state
from toolrun.errors import ToolNotFound
from toolrun.interop.formats import ExportFormat, export
from toolrun.permissions.agents import AgentProfile
from toolrun.tools.base import Tool
from toolrun.tools.docs import render_markdown
from toolrun.tools.model import ToolDescriptor
from toolrun.tools.semver import VersionRange

router = APIRouter(prefix="/v1/tools", tags=["tools"])
State = Annotated[ApiState, Depends(get_state)]
Version = Annotated[str | None, Query(max_length=64, description="Default: the newest version.")]


@router.get(
    "",
    response_model=list[ToolDescriptor] | list[dict[str, Any]],
    responses={
        422: {"description": "Two tools would export under the same name, or strict without openai"}
    },
)
async def list_tools(
    state: State,
    agent: Agent,
    format: Annotated[
        ExportFormat | None,
        Query(
            description="openai, anthropic or mcp: the newest version of each tool the "
            "agent may call, in that API's shape; default: every version in its tool set, "
            "as toolrun descriptors."
        ),
    ] = None,
    strict: Annotated[
        bool,
        Query(description="openai: strict mode (strict: true) for each tool that allows it."),
    ] = False,
) -> list[ToolDescriptor] | list[dict[str, Any]]:
    """Every registered tool version in the agent's tool set, or the tools it may call
    in the OpenAI, Anthropic or MCP shape."""
    if format is None:
        return [tool.descriptor for tool in state.registry.list() if agent.sees(tool.descriptor)]
    callable_ = [t.descriptor for t in state.registry.list() if agent.refusal(t.descriptor) is None]
    try:
        return export(callable_, format, strict=strict)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.get("/{name}", responses={404: {"description": "No such tool or version"}})
async def get_tool(
    name: str, state: State, agent: Agent, version: Version = None
) -> ToolDescriptor:
    """One tool's descriptor."""
    return _visible_tool(state, agent, name, version).descriptor


class ToolVersions(BaseModel):
    """The versions of one tool, and which one a call without a version runs."""

    name: str
    versions: list[str]  # oldest first
    default: str  # the newest stable release within the agent's pin (else pre-release)
    pinned: str | None  # the agent's version range for this tool


@router.get("/{name}/versions", responses={404: {"description": "No such tool"}})
async def get_tool_versions(name: str, state: State, agent: Agent) -> ToolVersions:
    """Every registered version of a tool; `default` is what a call that names no version
    runs for this agent."""
    pinned = agent.pin(name)
    chosen = _visible_tool(state, agent, name, None, pin=pinned)
    known = [tool for tool in state.registry.versions(name) if agent.sees(tool.descriptor)]
    return ToolVersions(
        name=name,
        versions=[tool.descriptor.version for tool in known],
        default=chosen.descriptor.version,
        pinned=None if pinned is None else str(pinned),
    )


@router.get(
    "/{name}/docs",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}}, 404: {"description": "No such tool"}},
)
async def get_tool_docs(
    name: str, state: State, agent: Agent, version: Version = None
) -> PlainTextResponse:
    """One tool's documentation as Markdown."""
    descriptor = _visible_tool(state, agent, name, version).descriptor
    return PlainTextResponse(render_markdown(descriptor), media_type="text/markdown")


def _visible_tool(
    state: ApiState,
    agent: AgentProfile,
    name: str,
    version: str | None,
    *,
    pin: VersionRange | None = None,
) -> Tool:
    """The tool a call would run for this agent; 404, naming the tools it may see, when
    there is none or the agent may not see it."""
    try:
        tool = state.registry.resolve(name, version, pin=pin, visible=agent.sees)
    except ToolNotFound as exc:
        raise HTTPException(404, str(exc)) from exc
    if not agent.sees(tool.descriptor):
        raise HTTPException(404, str(state.registry.unknown(name, version, agent.sees)))
    return tool

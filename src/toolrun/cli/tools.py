"""`toolrun tools`: list, show and export the registry the platform runs (built-in and
module tools, plugins, imported MCP servers' tools)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.markdown import Markdown
from rich.table import Table

from toolrun.cli._console import (
    load_settings,
    open_platform_database,
    out,
    platform_registry,
    usage_error,
)
from toolrun.interop.formats import ExportFormat, export
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools import Tool, render_markdown

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS


@app.command("list")
def tools_list(
    as_json: Annotated[bool, typer.Option("--json", help="Full descriptors as JSON.")] = False,
    expand: Annotated[
        bool, typer.Option("--all", help="One row per tool, families (git_*) expanded.")
    ] = False,
) -> None:
    """List every registered tool; a family such as git_* is one row unless --all."""
    registry = platform_registry(load_settings())
    if as_json:
        descriptors = [tool.descriptor.model_dump(mode="json") for tool in registry.list()]
        sys.stdout.write(json.dumps(descriptors, indent=2) + "\n")
        return
    tools = registry.list()
    families = {} if expand else tool_families(tools)
    family_of = {id(tool): name for name, members in families.items() for tool in members}
    table = Table("name", "version", "permission", "risk", "category", "description")
    for tool in tools:
        family = family_of.get(id(tool))
        if family is None:
            d = tool.descriptor
            summary = d.description.split(". ")[0]
            table.add_row(d.name, d.version, d.permission, d.risk, d.category, summary)
        elif families[family][0] is tool:
            table.add_row(*_family_row(family, families[family]))
    out.print(table)


def tool_families(tools: list[Tool]) -> dict[str, list[Tool]]:
    """Tools grouped under a shared tag that prefixes each name (`git` for git_status...),
    for families of two or more."""
    families: dict[str, list[Tool]] = {}
    for tool in tools:
        for tag in tool.descriptor.tags:
            if tool.descriptor.name.startswith(f"{tag}_"):
                families.setdefault(tag, []).append(tool)
                break
    return {name: members for name, members in families.items() if len(members) > 1}


def _family_row(family: str, members: list[Tool]) -> tuple[str, ...]:
    levels = sorted(
        {tool.descriptor.permission for tool in members}, key=list(PermissionLevel).index
    )
    risks = sorted({tool.descriptor.risk for tool in members}, key=list(Risk).index)
    names = ", ".join(tool.descriptor.name.removeprefix(f"{family}_") for tool in members)
    return (
        family,
        f"{len(members)} tools",
        "..".join(dict.fromkeys([levels[0], levels[-1]])),
        "..".join(dict.fromkeys([risks[0], risks[-1]])),
        members[0].descriptor.category,
        f"{family}_*: {names} (toolrun tools list --all)",
    )


@app.command("export")
def tools_export(
    format: Annotated[
        ExportFormat, typer.Option("--format", help="openai, anthropic or mcp.")
    ] = ExportFormat.OPENAI,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="Only the tools this agent (name or id) may call."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="openai: strict mode where a tool allows it.")
    ] = False,
) -> None:
    """Print the registry's tools as a JSON list in the shape an API takes: OpenAI
    function calling, Anthropic tool use, or MCP tools/list."""
    settings = load_settings()
    descriptors = [tool.descriptor for tool in platform_registry(settings).list()]
    if agent is not None:
        store = AgentStore(open_platform_database(settings))
        profile = store.get(agent) or store.by_id(agent)
        if profile is None:
            raise usage_error(f"no agent named {agent!r} (toolrun agents list)")
        descriptors = [d for d in descriptors if profile.refusal(d) is None]
    try:
        exported = export(descriptors, format, strict=strict)
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    sys.stdout.write(json.dumps(exported, indent=2) + "\n")


@app.command("show")
def tools_show(
    name: str,
    version: Annotated[
        str | None, typer.Option(help="A specific version (default: newest).")
    ] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Raw Markdown docs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The descriptor as JSON.")] = False,
) -> None:
    """Show one tool's documentation."""
    registry = platform_registry(load_settings())
    tool = registry.get(name, version)
    if tool is None:
        raise usage_error(registry.missing(name, version))
    if as_json:
        sys.stdout.write(tool.descriptor.model_dump_json(indent=2) + "\n")
    elif markdown:
        sys.stdout.write(render_markdown(tool.descriptor))
    else:
        out.print(Markdown(render_markdown(tool.descriptor)))

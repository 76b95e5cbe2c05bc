"""`toolrun tools`: list and show the registry."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.markdown import Markdown
from rich.table import Table

from toolrun.cli._console import load_registry, load_settings, out, usage_error
from toolrun.tools import render_markdown

app = typer.Typer(help="Inspect the tool registry.", no_args_is_help=True)


@app.command("list")
def tools_list(
    as_json: Annotated[bool, typer.Option("--json", help="Full descriptors as JSON.")] = False,
) -> None:
    """List every registered tool."""
    registry = load_registry(load_settings())
    if as_json:
        descriptors = [tool.descriptor.model_dump(mode="json") for tool in registry.list()]
        sys.stdout.write(json.dumps(descriptors, indent=2) + "\n")
        return
    table = Table("name", "version", "permission", "risk", "category", "description")
    for tool in registry.list():
        d = tool.descriptor
        summary = d.description.split(". ")[0]
        table.add_row(d.name, d.version, d.permission, d.risk, d.category, summary)
    out.print(table)


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
    registry = load_registry(load_settings())
    tool = registry.get(name, version)
    if tool is None:
        raise usage_error(registry.missing(name, version))
    if as_json:
        sys.stdout.write(tool.descriptor.model_dump_json(indent=2) + "\n")
    elif markdown:
        sys.stdout.write(render_markdown(tool.descriptor))
    else:
        out.print(Markdown(render_markdown(tool.descriptor)))

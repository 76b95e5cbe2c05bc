"""`toolrun subagents`: the Task tool's sub-agent definitions (docs/subagents.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import api_client, api_failure, load_api_settings, out, usage_error
from toolrun.client import ApiError, ApiUnreachable
from toolrun.subagents.definition import SubAgentError, parse_markdown, to_markdown

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS
Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]


@app.command("list")
def list_subagents(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    api: Api = None,
) -> None:
    """Registered definitions and the workspace's (.toolrun/agents/*.md)."""
    try:
        with api_client(load_api_settings(), api) as client:
            found = client.subagents()
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return
    table = Table("name", "source", "ceiling", "tools", "max turns", "description")
    for entry in found:
        tools = entry["tools"]
        table.add_row(
            escape(entry["name"]),
            escape(entry["path"] or entry["source"]),
            entry["ceiling"] or "",
            escape("(all)" if tools is None and not entry["problem"] else ", ".join(tools or [])),
            str(entry["max_turns"] or ""),
            escape(entry["description"] or f"[red]{entry['problem']}[/]"),
        )
    out.print(table)


@app.command()
def show(name: str, api: Api = None) -> None:
    """One definition, as a Markdown file."""
    try:
        with api_client(load_api_settings(), api) as client:
            agent = client.get_subagent(name)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    sys.stdout.write(to_markdown(agent))


@app.command()
def register(
    file: Annotated[Path, typer.Argument(metavar="FILE.md", help="Markdown, YAML front matter.")],
    api: Api = None,
) -> None:
    """Register a definition (admins), replacing a registered one of the same name."""
    try:
        agent = parse_markdown(file.read_text(encoding="utf-8"), str(file))
    except OSError as exc:
        raise usage_error(f"cannot read {file}: {exc.strerror}") from exc
    except (SubAgentError, UnicodeDecodeError) as exc:
        raise usage_error(str(exc)) from exc
    try:
        with api_client(load_api_settings(), api) as client:
            created = client.register_subagent(agent)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    verb = "registered" if created else "replaced"
    out.print(f"{verb} sub-agent {escape(agent.name)} (ceiling {agent.ceiling})", highlight=False)


@app.command()
def remove(name: str, api: Api = None) -> None:
    """Unregister a definition (admins)."""
    try:
        with api_client(load_api_settings(), api) as client:
            client.remove_subagent(name)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    out.print(f"removed sub-agent {escape(name)}", highlight=False)

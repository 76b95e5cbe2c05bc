"""`toolrun agents`: create, list and revoke agent profiles (on the database directly)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import err, load_settings, open_platform_database, out, usage_error
from toolrun.permissions.agents import AgentError, AgentProfile, AgentStore, Role
from toolrun.permissions.levels import PermissionLevel

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS


def _store() -> AgentStore:
    return AgentStore(open_platform_database(load_settings()))


@app.command()
def create(
    name: str,
    ceiling: Annotated[PermissionLevel, typer.Option(help="Highest tool level it may call.")],
    role: Annotated[Role, typer.Option(help="operator may approve; admin may administer.")] = (
        Role.AGENT
    ),
    tools: Annotated[
        str | None,
        typer.Option(help="Comma-separated tool names and tag:<tag> entries (default: all)."),
    ] = None,
    pin: Annotated[
        list[str] | None, typer.Option(help="Version pin, e.g. grep@^1.2 (repeatable).")
    ] = None,
) -> None:
    """Create an agent and print its token, once: it is stored hashed."""
    chosen = None if tools is None else [t.strip() for t in tools.split(",") if t.strip()]
    try:
        profile, token = _store().create(
            name, ceiling=ceiling, role=role, tools=chosen, pins=pin or []
        )
    except AgentError as exc:
        raise usage_error(str(exc)) from exc
    err.print(
        f"created agent [bold]{escape(profile.name)}[/] ({profile.role}, ceiling "
        f"{profile.ceiling}); its token is shown this once:",
        highlight=False,
    )
    sys.stdout.write(token + "\n")


@app.command("list")
def list_agents(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every active agent."""
    profiles = _store().list()
    if as_json:
        sys.stdout.write(json.dumps([_plain(p) for p in profiles], indent=2) + "\n")
        return
    table = Table("name", "role", "ceiling", "tools", "pins")
    for profile in profiles:
        table.add_row(
            escape(profile.name),
            profile.role.value,
            profile.ceiling.value,
            escape(", ".join(sorted(profile.tools)) if profile.tools is not None else "(all)"),
            escape(", ".join(f"{name}@{wanted}" for name, wanted in profile.pins)),
        )
    out.print(table)


@app.command()
def revoke(name: str) -> None:
    """Revoke an agent's token for good (within 5 s on running API processes)."""
    if not _store().revoke(name):
        raise usage_error(f"no agent named {name!r}")
    err.print(f"revoked {escape(name)}")


def _plain(profile: AgentProfile) -> dict[str, object]:
    return {
        "name": profile.name,
        "role": profile.role.value,
        "ceiling": profile.ceiling.value,
        "tools": None if profile.tools is None else sorted(profile.tools),
        "pins": [f"{name}@{wanted}" for name, wanted in profile.pins],
    }

"""`toolrun agents`: create, list and revoke agent profiles — through the API of the
platform running for this workspace (or TOOLRUN_API), so its processes see the change at
once; on the database directly when no platform runs."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import (
    api_client,
    api_failure,
    err,
    load_settings,
    open_platform_database,
    out,
    platform_registry,
    usage_error,
)
from toolrun.client import ApiError, ApiUnreachable, Client
from toolrun.errors import ToolrunError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

if TYPE_CHECKING:
    from toolrun.config import Settings
    from toolrun.permissions.agents import AgentProfile, AgentStore

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS


def _platform(settings: Settings) -> Client | None:
    """A client of the platform when one runs for this workspace (or TOOLRUN_API is
    set), else None: the database is changed directly."""
    return api_client(settings) if "api" in settings.model_fields_set else None


def _store(settings: Settings) -> AgentStore:
    """The agents' table, for when no platform runs (SQLModel: imported here only)."""
    from toolrun.permissions.agents import AgentStore  # noqa: PLC0415

    return AgentStore(open_platform_database(settings))


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
    settings = load_settings()
    client = _platform(settings)
    try:
        if client is not None:
            with client:
                created = client.create_agent(
                    name, ceiling=ceiling.value, role=role.value, tools=chosen, pins=pin or []
                )
            shown, token = created["agent"], str(created["token"])
        else:
            from toolrun.permissions.agents import unknown_entries_message  # noqa: PLC0415

            unknown = platform_registry(settings).unknown_entries(chosen or [])
            if unknown:
                raise usage_error(unknown_entries_message(unknown))
            profile, token = _store(settings).create(
                name, ceiling=ceiling, role=role, tools=chosen, pins=pin or []
            )
            shown = _plain(profile)
    except (ApiError, ApiUnreachable) as exc:
        raise _refused(exc) from exc
    except ToolrunError as exc:  # AgentError: a bad name or pin, a name taken
        raise usage_error(str(exc)) from exc
    err.print(
        f"created agent [bold]{escape(shown['name'])}[/] ({shown['role']}, ceiling "
        f"{shown['ceiling']}); its token is shown this once:",
        highlight=False,
    )
    sys.stdout.write(token + "\n")


@app.command("list")
def list_agents(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every active agent."""
    settings = load_settings()
    client = _platform(settings)
    if client is None:
        profiles = [_plain(profile) for profile in _store(settings).list()]
    else:
        try:
            with client:
                profiles = client.agents()
        except (ApiError, ApiUnreachable) as exc:
            raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(profiles, indent=2) + "\n")
        return
    table = Table("name", "role", "ceiling", "tools", "pins")
    for profile in profiles:
        tools = profile["tools"]
        table.add_row(
            escape(profile["name"]),
            profile["role"],
            profile["ceiling"],
            escape(", ".join(tools) if tools is not None else "(all)"),
            escape(", ".join(profile["pins"])),
        )
    out.print(table)


@app.command()
def revoke(name: str) -> None:
    """Revoke an agent's token for good (within 5 s on running API processes)."""
    settings = load_settings()
    client = _platform(settings)
    if client is None:
        if not _store(settings).revoke(name):
            raise usage_error(f"no agent named {name!r}")
    else:
        try:
            with client:
                client.revoke_agent(name)
        except (ApiError, ApiUnreachable) as exc:
            raise _refused(exc) from exc
    err.print(f"revoked {escape(name)}")


def _refused(exc: ApiError | ApiUnreachable) -> typer.Exit:
    """A refusal of the request itself (a bad name, an unknown tool) is a usage error."""
    if isinstance(exc, ApiError) and exc.status_code in (404, 409, 422):
        return usage_error(exc.detail)
    return api_failure(exc)


def _plain(profile: AgentProfile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "role": profile.role.value,
        "ceiling": profile.ceiling.value,
        "tools": None if profile.tools is None else sorted(profile.tools),
        "pins": [f"{name}@{wanted}" for name, wanted in profile.pins],
    }

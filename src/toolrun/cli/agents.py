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
    load_api_settings,
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

RateOption = Annotated[
    float | None, typer.Option("--rate", min=0, help="Calls per second it may queue (0: any).")
]
BurstOption = Annotated[
    int | None, typer.Option(min=0, help="Calls it may queue at once above its rate.")
]
InFlightOption = Annotated[
    int | None, typer.Option(min=0, help="Calls it may have queued or running (0: any).")
]
QueuedOption = Annotated[
    int | None, typer.Option(min=0, help="Calls it may have waiting for a worker (0: any).")
]
LIMITS = ("rate_per_s", "burst", "max_in_flight", "max_queued")


def _platform() -> Client | None:
    """A client of the platform when one runs for this workspace (or TOOLRUN_API is
    set), else None: the database is changed directly (with the whole `load_settings`)."""
    settings = load_api_settings()
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
    rate: RateOption = None,
    burst: BurstOption = None,
    max_in_flight: InFlightOption = None,
    max_queued: QueuedOption = None,
) -> None:
    """Create an agent and print its token, once: it is stored hashed. Quotas left out
    are the platform's defaults (TOOLRUN_AGENT_*)."""
    chosen = None if tools is None else [t.strip() for t in tools.split(",") if t.strip()]
    limits = _limits(rate, burst, max_in_flight, max_queued)
    client = _platform()
    try:
        if client is not None:
            with client:
                created = client.create_agent(
                    name,
                    ceiling=ceiling.value,
                    role=role.value,
                    tools=chosen,
                    pins=pin or [],
                    quota=limits or None,
                )
            shown, token = created["agent"], str(created["token"])
        else:
            from toolrun.permissions.agents import unknown_entries_message  # noqa: PLC0415
            from toolrun.permissions.quotas import Quota  # noqa: PLC0415

            settings = load_settings()
            unknown = platform_registry(settings).unknown_entries(chosen or [])
            if unknown:
                raise usage_error(unknown_entries_message(unknown))
            profile, token = _store(settings).create(
                name,
                ceiling=ceiling,
                role=role,
                tools=chosen,
                pins=pin or [],
                quota=Quota.of(limits),
            )
            shown = _plain(profile, settings)
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
    client = _platform()
    if client is None:
        settings = load_settings()
        profiles = [_plain(profile, settings) for profile in _store(settings).list()]
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
    client = _platform()
    if client is None:
        if not _store(load_settings()).revoke(name):
            raise usage_error(f"no agent named {name!r}")
    else:
        try:
            with client:
                client.revoke_agent(name)
        except (ApiError, ApiUnreachable) as exc:
            raise _refused(exc) from exc
    err.print(f"revoked {escape(name)}")


@app.command()
def show(
    name: str,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One agent: its profile, its quotas in force and what it uses of them now."""
    client = _platform()
    try:
        if client is not None:
            with client:
                shown = client.agent(name)
        else:
            settings = load_settings()
            profile = _store(settings).get(name)
            if profile is None:
                raise usage_error(f"no agent named {name!r}")
            shown = _plain(profile, settings)
    except (ApiError, ApiUnreachable) as exc:
        raise _refused(exc) from exc
    _print_agent(shown, as_json)


@app.command()
def quota(
    name: str,
    rate: RateOption = None,
    burst: BurstOption = None,
    max_in_flight: InFlightOption = None,
    max_queued: QueuedOption = None,
    reset: Annotated[
        list[str] | None,
        typer.Option(help="A limit to give back to the platform's default (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Change an agent's quotas (0: no limit); running API processes apply them within
    5 s. Limits left out are unchanged."""
    limits = _limits(rate, burst, max_in_flight, max_queued)
    if not limits and not reset:
        raise usage_error(
            "give a limit to set (--rate, --burst, --max-in-flight, --max-queued) or --reset LIMIT"
        )
    client = _platform()
    try:
        if client is not None:
            with client:
                shown = client.set_quota(name, limits, reset=reset or [])
        else:
            from toolrun.permissions.quotas import Quota  # noqa: PLC0415

            settings = load_settings()
            profile = _store(settings).set_quota(name, Quota.of(limits), reset=reset or [])
            shown = _plain(profile, settings)
    except (ApiError, ApiUnreachable) as exc:
        raise _refused(exc) from exc
    except ToolrunError as exc:  # AgentError: no such agent, no such limit
        raise usage_error(str(exc)) from exc
    _print_agent(shown, as_json)


def _limits(
    rate: float | None, burst: int | None, max_in_flight: int | None, max_queued: int | None
) -> dict[str, float | int]:
    """The limits given on the command line, by their API names."""
    given = dict(zip(LIMITS, (rate, burst, max_in_flight, max_queued), strict=True))
    return {limit: value for limit, value in given.items() if value is not None}


def _print_agent(shown: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(shown, indent=2) + "\n")
        return
    tools = shown["tools"]
    lines = [
        f"[bold]{escape(shown['name'])}[/]  {shown['role']}, ceiling {shown['ceiling']}",
        f"tools      {escape(', '.join(tools) if tools is not None else '(all)')}",
        f"pins       {escape(', '.join(shown['pins']) or '(none)')}",
    ]
    limits = shown["quota"]
    own = set(limits.get("own", []))
    for limit in LIMITS:
        value = limits[limit]
        said = f"{value:g}" if value else "no limit"
        lines.append(f"{limit:<14} {said}{'' if limit in own else '  (default)'}")
    usage = shown.get("usage")
    if usage is None:
        lines.append("usage      (the platform is not running)")
    else:
        refused = ", ".join(f"{q} {n}" for q, n in sorted(usage["throttled"].items()))
        lines.append(f"queued     {usage['queued']}")
        lines.append(f"in flight  {usage['in_flight']}")
        lines.append(f"refused    {refused or 'none'}")
    out.print("\n".join(lines), highlight=False)


def _refused(exc: ApiError | ApiUnreachable) -> typer.Exit:
    """A refusal of the request itself (a bad name, an unknown tool) is a usage error."""
    if isinstance(exc, ApiError) and exc.status_code in (404, 409, 422):
        return usage_error(exc.detail)
    return api_failure(exc)


def _plain(profile: AgentProfile, settings: Settings) -> dict[str, Any]:
    """A profile read from the database, shaped as the API shows it (no usage)."""
    from toolrun.permissions.quotas import Quota  # noqa: PLC0415

    return {
        "name": profile.name,
        "role": profile.role.value,
        "ceiling": profile.ceiling.value,
        "tools": None if profile.tools is None else sorted(profile.tools),
        "pins": [f"{name}@{wanted}" for name, wanted in profile.pins],
        "quota": profile.quota.shown(Quota.defaults(settings)),
    }

"""Consoles, exit codes and usage errors shared by the CLI commands.

Settings, the registry and the database are imported by the helpers that load them, so
that `toolrun --help` imports none of them (pydantic, jsonschema, SQLAlchemy); a command
that only talks to the API reads its few settings without pydantic (`load_api_settings`).
"""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import math
import re
import sys
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from toolrun.client import ApiError, ApiUnreachable, Client
from toolrun.errors import ToolrunError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from toolrun.cli._settings import ApiSettings, PlatformSettings
    from toolrun.config import Settings
    from toolrun.plugins.registry import PluginRegistry
    from toolrun.tools.registry import ToolRegistry

EXIT_TOOL_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_ENDED = 3  # a call still awaiting approval, queued or running: no failure

out = Console()
err = Console(stderr=True, soft_wrap=True)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def inert(value: object) -> str:
    """`value` as text whose control characters (a terminal's escapes, line breaks) are
    spelled out: what agents chose — arguments, file names — printed exactly as it is."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def usage_error(message: str) -> typer.Exit:
    """Print `message` (never as markup) and return the exit to raise."""
    err.print(f"[red]error:[/] {escape(message)}")
    return typer.Exit(EXIT_USAGE)


def load_registry(settings: Settings) -> ToolRegistry:
    """Built-in tools plus those of TOOLRUN_TOOL_MODULES; a bad module is a usage error."""
    from toolrun.tools.loading import registry_with

    try:
        return registry_with(settings.tool_modules, settings.tool_packs)
    except ToolrunError as exc:
        raise usage_error(str(exc)) from exc


# The settings this command found (see `load_settings`), for what `api_failure` says.
_loaded: list[PlatformSettings] = []


def platform_registry(settings: Settings) -> PluginRegistry:
    """The registry the platform's API and workers use (its registered plugins and
    imported MCP servers' tools too); a usage error when its database cannot be opened."""
    from sqlalchemy.exc import SQLAlchemyError

    from toolrun.plugins.registry import PluginRegistry, plugin_cache

    _secure_home(settings)
    registry = PluginRegistry(load_registry(settings), settings.database, plugin_cache(settings))
    try:
        registry.refresh(within_s=0)
    except SQLAlchemyError as exc:
        raise usage_error(f"cannot open the database {settings.database}: {exc}") from exc
    return registry


def api_token(settings: PlatformSettings) -> str | None:
    """TOOLRUN_TOKEN, else the embedded platform's admin token file when readable."""
    if settings.token:
        return settings.token
    try:
        return settings.admin_token_path.read_text().strip() or None
    except OSError:
        return None


def api_client(settings: PlatformSettings, api: str | None = None) -> Client:
    """A client for `api` (default TOOLRUN_API) with the CLI's token."""
    _without_httpx_command_line()
    if api:
        _loaded.append(settings.model_copy(update={"api": api}))  # what `_used` names
    return Client(api or settings.api, token=api_token(settings))


def _without_httpx_command_line() -> None:
    """httpx's package imports its own command line (click, pygments: about 40 ms) unless
    that import fails, which httpx allows for (its `cli` extra); the CLI never runs it,
    and a None entry in `sys.modules` makes the import fail."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def api_failure(exc: ApiError | ApiUnreachable) -> typer.Exit:
    """Print why the API could not be used and return the exit to raise."""
    if isinstance(exc, ApiUnreachable):
        return usage_error(
            f"{exc}; start the platform with `toolrun up` (or set TOOLRUN_API){_used()}"
        )
    if exc.status_code == 401:
        return usage_error(
            f"the API refused the token ({exc.detail}); set TOOLRUN_TOKEN to an agent "
            f"token{_used()}"
        )
    err.print(f"[red]refused ({exc.status_code}):[/] {escape(exc.detail)}")
    return typer.Exit(EXIT_TOOL_FAILED)


def _used() -> str:
    """Which home, API and token the command used (the settings it loaded last)."""
    if not _loaded:
        return ""
    settings = _loaded[-1]
    if settings.token:
        source = "from TOOLRUN_TOKEN"
    elif settings.admin_token_path.is_file():
        source = f"from {settings.admin_token_path}"
    else:
        source = f"none (no TOOLRUN_TOKEN, no {settings.admin_token_path})"
    return f"\n  used: home {settings.platform_home}; API {settings.api}; token {source}"


def load_settings(*, locate: bool = True) -> Settings:
    """The settings from the environment; with `locate`, the workspace and the running
    platform found as `_locate` explains (commands that talk to a platform)."""
    from pydantic import ValidationError

    from toolrun.cli._locate import locate as located
    from toolrun.config import Settings

    try:
        settings = Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        name, *inside = (str(part) for part in first["loc"])
        where = f" at {'.'.join(inside)}" if inside else ""
        raise usage_error(f"bad {Settings.variable(name)} setting{where}: {first['msg']}") from exc
    if locate:
        settings = located(settings)
    _loaded.append(settings)
    return settings


def load_api_settings() -> ApiSettings:
    """The workspace, home, API and token, found as `load_settings` finds them, for a
    command that only talks to the API: no pydantic, nothing else checked."""
    from toolrun.cli._locate import locate
    from toolrun.cli._settings import ApiSettings

    settings = locate(ApiSettings.from_environment())
    _loaded.append(settings)
    return settings


def open_platform_database(settings: Settings) -> Engine:
    """The platform's database (migrated); a usage error when it cannot be opened."""
    from sqlalchemy.exc import SQLAlchemyError

    from toolrun.database import open_database

    _secure_home(settings)
    try:
        return open_database(settings.database)
    except SQLAlchemyError as exc:
        raise usage_error(f"cannot open the database {settings.database}: {exc}") from exc


def _secure_home(settings: Settings) -> None:
    """The home a command is about to write (its database) is its owner's only."""
    from toolrun.embedded.home import secure_home

    secure_home(settings.platform_home)


_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration_s(text: str | float) -> float:
    """Seconds in "90", "90s", "15m", "1h", "7d" or "2w" (a typer option parser; a
    default given as a number passes through)."""
    if isinstance(text, int | float):
        return float(text)
    value = text.strip().lower()
    unit = _UNITS_S.get(value[-1:])
    number = value[:-1] if unit is not None else value
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not a duration (e.g. 90s, 15m, 1h, 7d, or seconds)"
        ) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise typer.BadParameter(f"{text!r} is not a positive duration")
    return seconds

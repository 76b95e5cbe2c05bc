"""Consoles, exit codes and usage errors shared by the CLI commands."""

from __future__ import annotations

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from toolrun.client import ApiError, ApiUnreachable, Client
from toolrun.config import Settings
from toolrun.errors import ToolrunError
from toolrun.tools.loading import registry_with
from toolrun.tools.registry import ToolRegistry

EXIT_TOOL_FAILED = 1
EXIT_USAGE = 2

out = Console()
err = Console(stderr=True, soft_wrap=True)


def usage_error(message: str) -> typer.Exit:
    """Print `message` (never as markup) and return the exit to raise."""
    err.print(f"[red]error:[/] {escape(message)}")
    return typer.Exit(EXIT_USAGE)


def load_registry(settings: Settings) -> ToolRegistry:
    """Built-in tools plus those of TOOLRUN_TOOL_MODULES; a bad module is a usage error."""
    try:
        return registry_with(settings.tool_modules)
    except ToolrunError as exc:
        raise usage_error(str(exc)) from exc


def api_token(settings: Settings) -> str | None:
    """TOOLRUN_TOKEN, else the embedded platform's admin token file when readable."""
    if settings.token:
        return settings.token
    try:
        return settings.admin_token_path.read_text().strip() or None
    except OSError:
        return None


def api_client(settings: Settings, api: str | None = None) -> Client:
    """A client for `api` (default TOOLRUN_API) with the CLI's token."""
    return Client(api or settings.api, token=api_token(settings))


def api_failure(exc: ApiError | ApiUnreachable) -> typer.Exit:
    """Print why the API could not be used and return the exit to raise."""
    if isinstance(exc, ApiUnreachable):
        return usage_error(f"{exc}; start the platform with `toolrun up`")
    if exc.status_code == 401:
        return usage_error(
            f"the API refused the token ({exc.detail}); set TOOLRUN_TOKEN to an agent token"
        )
    err.print(f"[red]refused ({exc.status_code}):[/] {escape(exc.detail)}")
    return typer.Exit(EXIT_TOOL_FAILED)


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise usage_error(f"bad TOOLRUN_{where.upper()} setting: {first['msg']}") from exc

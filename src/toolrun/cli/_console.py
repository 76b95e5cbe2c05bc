"""Consoles, exit codes and usage errors shared by the CLI commands."""

from __future__ import annotations

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

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


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise usage_error(f"bad TOOLRUN_{where.upper()} setting: {first['msg']}") from exc

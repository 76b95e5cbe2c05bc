"""The `toolrun` command. Its commands' modules import little at the top (heavy modules
where they are used); its groups are imported when a command line enters them."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from toolrun import __version__
from toolrun.cli import platform, selection
from toolrun.cli._deferred import SubApp, deferring
from toolrun.cli.call import call
from toolrun.cli.logs import logs
from toolrun.cli.stats import stats

GROUPS = (
    SubApp("tools", "toolrun.cli.tools:app", "Inspect the tool registry."),
    SubApp("agents", "toolrun.cli.agents:app", "Agent profiles and their tokens."),
    SubApp("subagents", "toolrun.cli.subagents:app", "Sub-agents the task tool delegates to."),
    SubApp(
        "plugins", "toolrun.cli.plugins:app", "WebAssembly plugins: custom tools (docs/plugins.md)."
    ),
    SubApp(
        "calls",
        "toolrun.cli.calls:app",
        "The calls not ended (list), or one call's state or result by its id (show).",
    ),
    SubApp("approvals", "toolrun.cli.approvals:app", "The approval inbox (operator token)."),
    SubApp(
        "blacklist", "toolrun.cli.selection:blacklist_app", "Tools kept out of recommendations."
    ),
    SubApp(
        "whitelist", "toolrun.cli.selection:whitelist_app", "Tools ranked first when they match."
    ),
    SubApp(
        "history",
        "toolrun.cli.history:app",
        "The calls that ended, newest first (subcommands: export, prune).",
    ),
    SubApp("dag", "toolrun.cli.dag:app", "DAG plans: tool calls that feed each other."),
    SubApp(
        "mcp",
        "toolrun.cli.mcp:app",
        "Serve toolrun's tools over MCP (no subcommand), or import an MCP server's tools.",
    ),
)

app = typer.Typer(
    help="toolrun: run AI-agent tool calls safely.", no_args_is_help=True, cls=deferring(GROUPS)
)


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"toolrun {__version__}")
        raise typer.Exit


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """toolrun: run AI-agent tool calls safely."""


app.command("call")(call)
app.command("select")(selection.select)
app.command("feedback")(selection.feedback)
app.command("stats")(stats)
app.command("up")(platform.up)
app.command("logs")(logs)
app.command("api")(platform.api)
app.command("worker")(platform.worker)
app.command("scheduler")(platform.scheduler)
app.command("flower")(platform.flower)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


__all__ = ["GROUPS", "app", "main"]

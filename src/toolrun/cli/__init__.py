"""The `toolrun` command."""

from __future__ import annotations

import logging

import typer

from toolrun.cli import agents, approvals, platform, tools
from toolrun.cli.call import call
from toolrun.cli.history import history

app = typer.Typer(help="toolrun: run AI-agent tool calls safely.", no_args_is_help=True)
app.add_typer(tools.app, name="tools")
app.add_typer(agents.app, name="agents")
app.add_typer(approvals.app, name="approvals")
app.command("call")(call)
app.command("history")(history)
app.command("up")(platform.up)
app.command("api")(platform.api)
app.command("worker")(platform.worker)
app.command("flower")(platform.flower)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


__all__ = ["app", "main"]

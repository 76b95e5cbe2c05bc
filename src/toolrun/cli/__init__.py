"""The `toolrun` command."""

from __future__ import annotations

import logging

import typer

from toolrun.cli import (
    agents,
    approvals,
    dag,
    history,
    mcp,
    platform,
    plugins,
    selection,
    subagents,
    tools,
)
from toolrun.cli.call import call
from toolrun.cli.stats import stats

app = typer.Typer(help="toolrun: run AI-agent tool calls safely.", no_args_is_help=True)
app.add_typer(tools.app, name="tools")
app.add_typer(agents.app, name="agents")
app.add_typer(subagents.app, name="subagents")
app.add_typer(plugins.app, name="plugins")
app.add_typer(approvals.app, name="approvals")
app.command("call")(call)
app.command("select")(selection.select)
app.command("feedback")(selection.feedback)
app.add_typer(selection.blacklist_app, name="blacklist")
app.add_typer(selection.whitelist_app, name="whitelist")
app.add_typer(history.app, name="history")
app.command("stats")(stats)
app.add_typer(dag.app, name="dag")
app.add_typer(mcp.app, name="mcp")
app.command("up")(platform.up)
app.command("api")(platform.api)
app.command("worker")(platform.worker)
app.command("scheduler")(platform.scheduler)
app.command("flower")(platform.flower)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


__all__ = ["app", "main"]

"""The `toolrun` command: list and show tools, run calls."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.permissions.approvals import default_approver
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, render_markdown

EXIT_TOOL_FAILED = 1
EXIT_USAGE = 2

app = typer.Typer(help="toolrun: run AI-agent tool calls safely.", no_args_is_help=True)
tools_app = typer.Typer(help="Inspect the tool registry.", no_args_is_help=True)
app.add_typer(tools_app, name="tools")

out = Console()
err = Console(stderr=True, soft_wrap=True)


def _usage_error(message: str) -> typer.Exit:
    err.print(f"[red]error:[/] {escape(message)}")
    return typer.Exit(EXIT_USAGE)


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise _usage_error(f"bad TOOLRUN_ setting: {exc.errors()[0]['msg']}") from exc


@tools_app.command("list")
def tools_list(
    as_json: Annotated[bool, typer.Option("--json", help="Full descriptors as JSON.")] = False,
) -> None:
    """List every registered tool."""
    registry = ToolRegistry.with_builtins()
    if as_json:
        descriptors = [tool.descriptor.model_dump(mode="json") for tool in registry.list()]
        sys.stdout.write(json.dumps(descriptors, indent=2) + "\n")
        return
    table = Table("name", "version", "permission", "risk", "category", "description")
    for tool in registry.list():
        d = tool.descriptor
        table.add_row(
            d.name, d.version, d.permission, d.risk, d.category, d.description.split(". ")[0]
        )
    out.print(table)


@tools_app.command("show")
def tools_show(
    name: str,
    version: Annotated[
        str | None, typer.Option(help="A specific version (default: newest).")
    ] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Raw Markdown docs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The descriptor as JSON.")] = False,
) -> None:
    """Show one tool's documentation."""
    registry = ToolRegistry.with_builtins()
    tool = registry.get(name, version)
    if tool is None:
        wanted = name + (f"@{version}" if version else "")
        raise _usage_error(
            f"unknown tool: {wanted}; available tools: {', '.join(registry.names())}"
        )
    if as_json:
        sys.stdout.write(tool.descriptor.model_dump_json(indent=2) + "\n")
    elif markdown:
        sys.stdout.write(render_markdown(tool.descriptor))
    else:
        out.print(Markdown(render_markdown(tool.descriptor)))


@app.command("call")
def call(
    name: str,
    args: Annotated[str, typer.Option("--args", help="Arguments as a JSON object.")] = "{}",
    version: Annotated[str | None, typer.Option(help="Tool version (default: newest).")] = None,
    workspace: Annotated[
        Path | None, typer.Option(help="Workspace root (default: TOOLRUN_WORKSPACE or cwd).")
    ] = None,
    local: Annotated[bool, typer.Option("--local", help="Run in this process.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve confirmations.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
) -> None:
    """Run one tool call and print its result (exit 0 success, 1 tool failure, 2 bad usage)."""
    if not local:
        raise _usage_error("only --local (in-process) calls are available in this version")
    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as exc:
        raise _usage_error(f"--args is not valid JSON: {exc}") from exc
    if not isinstance(arguments, dict):
        raise _usage_error('--args must be a JSON object, e.g. \'{"file_path": "a.txt"}\'')
    settings = _settings()
    approver = default_approver(assume_yes=yes, interactive=sys.stdin.isatty())
    try:
        ctx = ToolContext.create(settings, workspace=workspace, approver=approver)
    except SandboxViolation as exc:
        raise _usage_error(str(exc)) from exc
    executor = Executor(ToolRegistry.with_builtins())
    result = executor.execute(ToolCall(tool_name=name, version=version, arguments=arguments), ctx)
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        _print_result(result)
    if not result.ok:
        raise typer.Exit(EXIT_TOOL_FAILED)


_TEXT_FIELDS = ("content", "stdout", "stderr")


def _print_result(result: ToolResult) -> None:
    """Human form: text fields printed raw, other fields as JSON, status line on stderr."""
    output: Any = result.output
    if isinstance(output, dict):
        for key in _TEXT_FIELDS:
            if output.get(key):
                sys.stdout.write(output[key].rstrip("\n") + "\n")
        rest = {k: v for k, v in output.items() if k not in _TEXT_FIELDS and v is not None}
        if rest:
            out.print_json(data=rest)
    elif output is not None:
        out.print_json(data=output)
    status = "green" if result.ok else "red"
    line = (
        f"[{status}]{result.status}[/] {escape(result.tool_name)} {result.tool_version or ''} "
        f"in {result.metadata['execution_time_ms']:.1f} ms"
    )
    err.print(line + (f" — {escape(result.error)}" if result.error else ""), highlight=False)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()

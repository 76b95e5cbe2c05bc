"""`toolrun call`: one tool call, through the API or in this process (--local)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from toolrun.cli._console import (
    EXIT_TOOL_FAILED,
    err,
    load_registry,
    load_settings,
    out,
    usage_error,
)
from toolrun.client import ApiError, ApiUnreachable, Client
from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.permissions.approvals import default_approver
from toolrun.tools import Executor, ToolCall, ToolContext, ToolResult


def call(
    name: str,
    args: Annotated[str, typer.Option("--args", help="Arguments as a JSON object.")] = "{}",
    version: Annotated[str | None, typer.Option(help="Tool version (default: newest).")] = None,
    local: Annotated[
        bool, typer.Option("--local", help="Run in this process instead of on the platform.")
    ] = False,
    api: Annotated[
        str | None, typer.Option(help="API base URL (default: TOOLRUN_API or 127.0.0.1:8000).")
    ] = None,
    wait: Annotated[float, typer.Option(help="Seconds to wait for the result (API).")] = 60.0,
    workspace: Annotated[
        Path | None,
        typer.Option(help="Workspace root for --local (default: TOOLRUN_WORKSPACE or cwd)."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve confirmations (--local).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
) -> None:
    """Run one tool call and print its result (exit 0 success, 1 tool failure, 2 bad usage)."""
    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as exc:
        raise usage_error(f"--args is not valid JSON: {exc}") from exc
    if not isinstance(arguments, dict):
        raise usage_error('--args must be a JSON object, e.g. \'{"file_path": "a.txt"}\'')
    settings = load_settings()
    if local:
        result = _run_local(
            settings, ToolCall(tool_name=name, version=version, arguments=arguments), workspace, yes
        )
    else:
        if workspace is not None or yes:
            raise usage_error("--workspace and --yes apply to --local calls only")
        result = _run_remote(api or settings.api, name, arguments, version, wait)
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        print_result(result)
    if not result.ok:
        raise typer.Exit(EXIT_TOOL_FAILED)


def _run_local(settings: Settings, call: ToolCall, workspace: Path | None, yes: bool) -> ToolResult:
    approver = default_approver(assume_yes=yes, interactive=sys.stdin.isatty())
    try:
        ctx = ToolContext.create(settings, workspace=workspace, approver=approver)
    except SandboxViolation as exc:
        raise usage_error(str(exc)) from exc
    return Executor(load_registry(settings)).execute(call, ctx)


def _run_remote(
    api: str, name: str, arguments: dict[str, Any], version: str | None, wait: float
) -> ToolResult:
    try:
        with Client(api) as client:
            return client.call(name, arguments, wait=wait, version=version)
    except ApiUnreachable as exc:
        raise usage_error(f"{exc}; start the platform with `toolrun up`, or pass --local") from exc
    except ApiError as exc:
        err.print(f"[red]refused ({exc.status_code}):[/] {escape(exc.detail)}")
        raise typer.Exit(EXIT_TOOL_FAILED) from exc


_TEXT_FIELDS = ("content", "stdout", "stderr")


def print_result(result: ToolResult) -> None:
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
    color = "green" if result.ok else ("yellow" if not result.final else "red")
    elapsed = result.metadata.get("execution_time_ms")
    took = f" in {elapsed:.1f} ms" if isinstance(elapsed, int | float) else ""
    line = (
        f"[{color}]{result.status}[/] {escape(result.tool_name)} {result.tool_version or ''}{took}"
        f" (call {result.call_id})"
    )
    err.print(line + (f" — {escape(result.error)}" if result.error else ""), highlight=False)
    if not result.final:
        err.print(
            f"not finished within --wait; its result: GET /v1/calls/{result.call_id}",
            highlight=False,
        )

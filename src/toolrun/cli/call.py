"""`toolrun call`: one tool call, through the API or in this process (--local).

The local runner (registry, sandbox) and the tool model are imported by the calls that
use them: `toolrun --help` imports neither, a call through the API no runner."""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from toolrun.cli._console import (
    api_client,
    api_failure,
    err,
    load_api_settings,
    load_registry,
    load_settings,
    usage_error,
)
from toolrun.cli._result_view import show_result
from toolrun.client import ApiError, ApiUnreachable
from toolrun.errors import SandboxViolation
from toolrun.permissions.approvals import Approver, default_approver

if TYPE_CHECKING:
    from toolrun.cli._settings import PlatformSettings
    from toolrun.config import Settings
    from toolrun.sandbox.proxy import Refusal
    from toolrun.tools.model import ToolCall, ToolResult


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
        bool, typer.Option("--yes", "-y", help="Approve confirm-policy calls (--local).")
    ] = False,
    allow_dangerous: Annotated[
        bool,
        typer.Option("--allow-dangerous", help="Authorise dangerous-policy calls too (--local)."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
) -> None:
    """Run one tool call and print its result (exit 0 success, 1 the tool failed or the
    call was refused, 2 bad usage, 3 not ended yet: awaiting approval, queued, running)."""
    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as exc:
        raise usage_error(f"--args is not valid JSON: {exc}") from exc
    if not isinstance(arguments, dict):
        raise usage_error('--args must be a JSON object, e.g. \'{"file_path": "a.txt"}\'')
    if local:
        from toolrun.tools.model import ToolCall

        settings = load_settings(locate=False)  # this directory, no platform
        approver = default_approver(
            assume_yes=yes, interactive=sys.stdin.isatty(), allow_dangerous=allow_dangerous
        )
        call_ = ToolCall(tool_name=name, version=version, arguments=arguments)
        result = _run_local(settings, call_, workspace, approver)
    else:
        if workspace is not None or yes or allow_dangerous:
            raise usage_error("--workspace, --yes and --allow-dangerous apply to --local only")
        result = _run_remote(load_api_settings(), api, name, arguments, version, wait)
    show_result(result, as_json=as_json)


def _run_local(
    settings: Settings, call: ToolCall, workspace: Path | None, approver: Approver
) -> ToolResult:
    from toolrun.local import run_local

    def refused(refusal: Refusal) -> None:
        err.print(f"[red]network:[/] {refusal.host}:{refusal.port} refused ({refusal.reason})")

    try:
        return run_local(
            settings,
            load_registry(settings),
            call,
            workspace=workspace,
            approver=approver,
            on_refused=refused,
        )
    except SandboxViolation as exc:
        raise usage_error(str(exc)) from exc


def _run_remote(
    settings: PlatformSettings,
    api: str | None,
    name: str,
    arguments: dict[str, Any],
    version: str | None,
    wait: float,
) -> ToolResult:
    """Submit, and keep waiting (up to `wait` in all) while the call awaits approval."""
    from toolrun.tools.model import ToolStatus

    deadline = time.monotonic() + wait
    try:
        with api_client(settings, api) as client:
            result = client.call(name, arguments, wait=wait, version=version)
            if result.status is ToolStatus.AWAITING_APPROVAL:
                err.print(
                    f"[yellow]awaiting approval:[/] {escape(result.error or '')}\n"
                    f"approve with `toolrun approvals approve {result.call_id}` or at "
                    f"{client.base_url}/ui/approvals; its result: "
                    f"`toolrun calls show {result.call_id} --wait 60`",
                    highlight=False,
                )
                left = max(0.0, deadline - time.monotonic())
                result = client.get_call(result.call_id, wait=left) if left else result
            return result
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc

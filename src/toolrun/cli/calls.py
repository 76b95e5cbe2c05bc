"""`toolrun calls`: the calls that have not ended (`list`), and one call's state or result
by its id or a unique prefix of it (`show`). The calls that ended are listed by `toolrun
history`, those waiting for a decision also by `toolrun approvals list`."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer
from rich.markup import escape

from toolrun.cli._console import api_client, api_failure, err, load_api_settings, out
from toolrun.cli._ids import MAX_LISTED, by_id, known_calls
from toolrun.cli._result_view import show_result
from toolrun.cli._statuses import OpenStatus
from toolrun.client import ApiError, ApiUnreachable

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS
_COLOURS = {"queued": "cyan", "running": "blue", "awaiting_approval": "yellow"}


@app.command("list")
def list_open(
    status: Annotated[OpenStatus | None, typer.Option(help="Only this status.")] = None,
    agent: Annotated[str | None, typer.Option(help="Only this agent's (operators).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=MAX_LISTED, help="Most rows.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calls as JSON.")] = False,
    api: Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")] = None,
) -> None:
    """The calls that have not ended — queued, running, awaiting approval — newest first,
    one a line: when queued, status, tool, for how long, agent, the whole call id."""
    try:
        with api_client(load_api_settings(), api) as client:
            found = client.calls(None if status is None else status.value, agent=agent, limit=limit)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return
    if not found:
        err.print("No call is queued, running or awaiting approval.", highlight=False)
    now = time.time()
    for call in found:
        _print_open(call, now)


def _print_open(call: dict[str, Any], now: float) -> None:
    """One call a line; for how long it has been running (else waiting), its worker."""
    facts = call.get("metadata") or {}
    queued = facts.get("queued_at") or now
    started = facts.get("started_at") if call["status"] == "running" else None
    today = time.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.localtime(queued))
    when = time.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M:%S", time.localtime(queued))
    since = f"{max(0.0, now - (started or queued)):.1f} s"
    colour = _COLOURS.get(call["status"], "yellow")
    tool = f"{call['tool_name']} {call.get('tool_version') or ''}".strip()
    agent = call.get("agent_name") or (facts.get("agent_id") or "")[:8]
    worker = (
        f"  [dim]on {escape(str(facts['worker']))}[/]" if started and facts.get("worker") else ""
    )
    out.print(
        f"{when}  [{colour}]{call['status']:<17}[/] {escape(tool):<20} {since:>9}  "
        f"{escape(agent):<12} [dim]{call['call_id']}[/]{worker}",
        highlight=False,
        soft_wrap=True,
    )


@app.command()
def show(
    call_id: Annotated[
        str,
        typer.Argument(
            help="The call's id, or a unique prefix of one among the calls not ended, the "
            "newest ended calls and the approval inbox."
        ),
    ],
    wait: Annotated[
        float, typer.Option(min=0, help="Seconds to wait for it to end (0: its state now).")
    ] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
) -> None:
    """A call's result, or its state while it has not ended (exit 0 success, 1 another
    ending, 3 not ended yet)."""
    try:
        with api_client(load_api_settings()) as client:
            result = by_id(
                call_id,
                lambda whole: client.get_call(whole, wait=wait),
                lambda: known_calls(client),
                "calls",
            )
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    show_result(result, as_json=as_json)

"""`toolrun history`: the calls that ended, newest first, as a table or JSON."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import api_client, api_failure, load_settings, out
from toolrun.client import ApiError, ApiUnreachable
from toolrun.tools.model import ToolStatus


def history(
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    agent: Annotated[str | None, typer.Option(help="Only this agent (operators).")] = None,
    status: Annotated[ToolStatus | None, typer.Option(help="Only this status.")] = None,
    since: Annotated[
        float | None, typer.Option(help="Only calls of the last N seconds.", min=0)
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Most rows.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    api: Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")] = None,
) -> None:
    """Recent calls, newest first: tool, status, agent, time, worker, error."""
    filters: dict[str, Any] = {
        "tool": tool,
        "agent": agent,
        "status": None if status is None else status.value,
        "since": None if since is None else time.time() - since,
        "limit": limit,
    }
    try:
        with api_client(load_settings(), api) as client:
            rows: list[dict[str, Any]] = client.history(**filters)["rows"]
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table("queued", "tool", "status", "ms", "agent", "worker", "call", "error")
    for row in rows:
        queued = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["queued_at"]))
        elapsed = row["execution_time_ms"]
        table.add_row(
            queued,
            escape(f"{row['tool_name']} {row['tool_version'] or ''}"),
            row["status"],
            "" if elapsed is None else f"{elapsed:.1f}",
            escape((row["agent_id"] or "")[:8]),
            escape(row["worker"] or ""),
            escape(row["call_id"]),
            escape((row["error"] or "")[:80]),
        )
    out.print(table)

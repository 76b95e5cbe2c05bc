"""`toolrun history`: the calls that ended, newest first; `export` them; `prune` old ones."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from toolrun.cli._console import (
    api_client,
    api_failure,
    duration_s,
    err,
    load_api_settings,
    load_settings,
    open_platform_database,
    out,
    usage_error,
)
from toolrun.cli._ids import known_calls, whole_id
from toolrun.cli._statuses import CallStatus
from toolrun.client import ApiError, ApiUnreachable
from toolrun.history.formats import ExportFormat

app = typer.Typer(invoke_without_command=True)  # help line: toolrun.cli.GROUPS
Tool = Annotated[str | None, typer.Option(help="Only this tool.")]
AgentName = Annotated[str | None, typer.Option(help="Only this agent (operators).")]
Status = Annotated[CallStatus | None, typer.Option(help="Only this status.")]
Since = Annotated[
    float | None,
    typer.Option(
        parser=duration_s, metavar="DURATION", help="Only calls queued in the last 15m, 1h, 7d..."
    ),
]
Parent = Annotated[
    str | None,
    typer.Option(
        metavar="CALL_ID",
        help="Only the calls made for this Task call (its id, or a unique prefix of one).",
    ),
]
Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]


def _filters(
    tool: str | None,
    agent: str | None,
    status: CallStatus | None,
    since: float | None,
    parent: str | None,
) -> dict[str, Any]:
    return {
        "tool": tool,
        "agent": agent,
        "status": None if status is None else status.value,
        "since": None if since is None else time.time() - since,
        "parent": parent,
    }


@app.callback()
def history(
    context: typer.Context,
    tool: Tool = None,
    agent: AgentName = None,
    status: Status = None,
    since: Since = None,
    parent: Parent = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Most rows.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    api: Api = None,
) -> None:
    """Recent calls, newest first: tool, status, agent, time, worker, error."""
    if context.invoked_subcommand is not None:
        return
    try:
        with api_client(load_api_settings(), api) as client:
            found = client.history(**_filters(tool, agent, status, since, parent), limit=limit)
            if parent is not None and not found["rows"]:  # perhaps a prefix of the parent
                whole = whole_id(parent, known_calls(client), "calls")
                if whole != parent:
                    filters = _filters(tool, agent, status, since, whole)
                    found = client.history(**filters, limit=limit)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    rows: list[dict[str, Any]] = found["rows"]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    if not rows:
        err.print("No call matches.", highlight=False)
    for row in rows:
        _print_row(row)


_STATUS_COLOURS = {"success": "green", "error": "red", "timeout": "red", "blocked": "red"}


def _print_row(row: dict[str, Any]) -> None:
    """One call a line — when, status, tool, time, agent, the whole id (`toolrun calls
    show` takes it) — and its error indented below (`--json` gives every field)."""
    queued = row["queued_at"]
    today = time.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.localtime(queued))
    when = time.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M:%S", time.localtime(queued))
    elapsed = row["execution_time_ms"]
    took = "" if elapsed is None else f"{elapsed:.1f} ms"
    colour = _STATUS_COLOURS.get(row["status"], "yellow")
    tool = f"{row['tool_name']} {row['tool_version'] or ''}".strip()
    out.print(
        f"{when}  [{colour}]{row['status']:<9}[/] {escape(tool):<20} {took:>10}  "
        f"{escape(_caller(row)):<12} [dim]{row['call_id']}[/]",
        highlight=False,
        soft_wrap=True,
    )
    if row["error"]:
        out.print(f"    {escape(row['error'][:200])}", highlight=False, soft_wrap=True)


def _caller(row: dict[str, Any]) -> str:
    """The agent (its name; its id's start where it has none), and the sub-agent that
    acted for it."""
    agent = row.get("agent_name") or (row["agent_id"] or "")[:8]
    return f"{agent}/{row['subagent']}" if row.get("subagent") else agent


@app.command()
def export(
    output: Annotated[
        Path | None, typer.Option(help="File to write (whole or not at all); default: stdout.")
    ] = None,
    format: Annotated[
        ExportFormat | None,
        typer.Option(help="csv (spreadsheets) or json; default: by --output's suffix, else json."),
    ] = None,
    tool: Tool = None,
    agent: AgentName = None,
    status: Status = None,
    since: Since = None,
    parent: Parent = None,
    api: Api = None,
) -> None:
    """Every matching call, newest first, as CSV or a JSON array, streamed."""
    kind: ExportFormat = format or ("csv" if output and output.suffix == ".csv" else "json")
    filters = _filters(tool, agent, status, since, parent)
    try:
        with api_client(load_api_settings(), api) as client:
            if output is None:
                client.export_history(sys.stdout.buffer, format=kind, **filters)
                return
            written = _write_whole(
                output, lambda file: client.export_history(file, format=kind, **filters)
            )
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    err.print(f"wrote {written:,} bytes of {kind} to {escape(str(output))}")


def _write_whole(path: Path, write: Any) -> int:
    """Write through `write(file)` into a temporary file beside `path`, then rename it into
    place: `path` is either the whole export or untouched."""
    if path.is_dir():
        raise usage_error(f"{path} is a directory")
    if not path.parent.is_dir():
        raise usage_error(f"no directory {path.parent}")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            written = int(write(file))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return written


@app.command()
def prune(
    older_than: Annotated[
        float | None,
        typer.Option(
            parser=duration_s,
            help="Delete calls queued longer ago than this (default: the retention period).",
        ),
    ] = None,
) -> None:
    """Delete old history rows now (the API also does it every hour)."""
    settings = load_settings()
    if older_than is None:
        if settings.history_retention_days is None:
            raise usage_error("no retention period set: give --older-than (e.g. 90d)")
        older_than = settings.history_retention_days * 86400
    before = time.time() - older_than
    from toolrun.history.store import HistoryStore  # noqa: PLC0415 - SQLModel: here only

    engine = open_platform_database(settings)
    try:
        gone = HistoryStore(engine).prune(before)
    finally:
        engine.dispose()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(before))
    out.print(f"pruned {gone:,} calls queued before {stamp}")

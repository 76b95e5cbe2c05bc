"""`toolrun stats`: how each tool did over a time window, and why slow tools are slow."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import api_client, api_failure, duration_s, load_api_settings, out
from toolrun.client import ApiError, ApiUnreachable


def stats(
    since: Annotated[
        float,
        typer.Option(
            parser=duration_s,
            metavar="DURATION",
            help="Calls that ended in the last 15m, 1h, 7d...",
        ),
    ] = 86400.0,
    by_version: Annotated[bool, typer.Option("--by-version", help="A row per version.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
    api: Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")] = None,
) -> None:
    """Per tool, over the calls that ended in the window: calls, refused (blocked, denied,
    cancelled: never ran), failures (errors and timeouts) and their share of the calls that
    ran, p50 / p95 time, mean CPU, and the peak RSS of the worker process that ran them
    (--json: also the mean and max time, timeouts and every status)."""
    until = time.time()
    try:
        with api_client(load_api_settings(), api) as client:
            answer = client.stats(
                since=until - since, until=until, by="version" if by_version else "tool"
            )
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(answer, indent=2) + "\n")
        return
    tools: list[dict[str, Any]] = answer["tools"]
    window = f"{_clock(until - since)} to {_clock(until)}"
    if not tools:
        out.print(f"No call ended from {window}.", highlight=False)
        return
    out.print(f"Calls that ended from {window}:", highlight=False)
    # Fits 80 columns; --json has every figure (mean, max, timeouts, statuses...).
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False)
    for header in ("tool", "calls", "refused", "failed", "p50", "p95", "cpu", "worker RSS"):
        table.add_column(header, no_wrap=True)
    for row in tools:
        name = row["tool"] + (f" {row['version']}" if row["version"] else "")
        refused = sum(row["statuses"].get(status, 0) for status in _REFUSED)
        ran = row["calls"] - refused
        table.add_row(
            escape(name),
            f"{row['calls']:,}",
            f"{refused:,}",
            f"{row['failures']:,}" + (f" {row['failures'] / ran:.0%}" if ran else ""),
            _ms(row["p50_ms"]),
            _ms(row["p95_ms"]),
            "" if row["mean_cpu_s"] is None else f"{row['mean_cpu_s']:.3f}s",
            _bytes(row["peak_rss_bytes"]),
        )
    out.print(table)
    worst = max(tools, key=lambda row: row["failures"])
    if worst["failures"]:
        out.print(
            f"most failures: {escape(worst['tool'])} ({worst['failures']:,} of "
            f"{worst['calls']:,}); why: toolrun history --tool {escape(worst['tool'])} "
            "--status error"
        )
    for slow in answer["slow"]:
        out.print(f"[yellow]slow:[/] {escape(slow['suggestion'])}")


_REFUSED = ("blocked", "denied", "cancelled")  # ended without running


def _clock(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value / 1000:.2f}s" if value >= 1000 else f"{value:.1f}ms"


def _bytes(value: int | None) -> str:
    return "" if value is None else f"{value / 2**20:.0f}MiB"

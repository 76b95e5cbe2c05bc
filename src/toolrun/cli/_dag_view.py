"""A DAG run as the terminal shows it: a header line and a table of nodes, redrawn live
while the run goes on."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from toolrun.cli.approvals import shown

View = Mapping[str, Any]  # GET /v1/dags/{id}

STATES = (
    "running",
    "ready",
    "pending",
    "succeeded",
    "failed",
    "upstream_failed",
    "skipped",
    "cancelled",
)
STATE_STYLES = {
    "pending": "dim",
    "ready": "cyan",
    "running": "yellow",
    "succeeded": "green",
    "failed": "red",
    "upstream_failed": "dark_orange",
    "skipped": "dim",
    "cancelled": "magenta",
}
RUN_STYLES = {"running": "yellow", "succeeded": "green", "failed": "red", "cancelled": "magenta"}
ERROR_WIDTH = 60


def render_run(view: View, *, now: float | None = None) -> Group:
    """The header line and the node table of a run's view; `now` (unix time) times the
    nodes still running."""
    return Group(run_header(view), node_table(view, time.time() if now is None else now))


def run_header(view: View) -> Text:
    """``run ID running: 1 running, 2 succeeded, 3 pending`` (and why it failed)."""
    status = str(view["status"])
    header = Text.assemble("run ", inert(view["id"], "bold"), " ")
    header.append_text(inert(status, RUN_STYLES.get(status, "")))
    counts = counts_text(view.get("counts") or {})
    if counts:
        header.append(": ")
        header.append_text(counts)
    if view.get("cancel_requested") and status == "running":
        header.append(" (cancel requested)", style="magenta")
    if view.get("error"):
        header.append("\n")
        header.append_text(inert(view["error"], "red"))
    return header


def counts_text(counts: Mapping[str, int]) -> Text:
    """``1 running, 2 succeeded``: the states that have nodes, active ones first."""
    states = [state for state in STATES if counts.get(state)]
    states += sorted(state for state in counts if state not in STATES and counts[state])
    text = Text()
    for index, state in enumerate(states):
        text.append(", " if index else "")
        text.append_text(inert(f"{counts[state]} {state}", STATE_STYLES.get(state, "")))
    return text


def runs_table(runs: Sequence[View], now: float) -> Table:
    """A row per run of GET /v1/dags: id, status, agent, start, time taken, nodes."""
    table = Table("run", "status", "agent", "created", "time", "nodes")
    for run in runs:
        status = str(run["status"])
        created = float(run["created_at"])
        finished = run.get("finished_at")
        table.add_row(
            inert(run["id"]),
            inert(status, RUN_STYLES.get(status, "")),
            inert(str(run.get("agent_id") or "")[:8]),
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)),
            duration(max(0.0, (now if finished is None else float(finished)) - created)),
            counts_text(run.get("counts") or {}),
        )
    return table


def node_table(view: View, now: float) -> Table:
    """A row per node: id, tool, state, attempts, time taken (or until its retry), error."""
    table = Table("node", "tool", "state", "attempts", "time", "error")
    for node in view.get("nodes") or []:
        state = str(node["state"])
        tool = str(node["tool"]) + (f" {node['version']}" if node.get("version") else "")
        table.add_row(
            inert(node["id"]),
            inert(tool),
            inert(state, STATE_STYLES.get(state, "")),
            str(node.get("attempts") or 0),
            _timing(node, now),
            inert(short_error(node.get("error")), "red"),
        )
    return table


def inert(value: object, style: str = "") -> Text:
    """`value` as plain text, control characters spelled out: agents and tools choose it."""
    return Text.from_markup(shown(value), style=style, emoji=False)


def short_error(error: object) -> str:
    """The first line of `error`, cut to ERROR_WIDTH characters."""
    text = "" if error is None else str(error).strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= ERROR_WIDTH else line[: ERROR_WIDTH - 1] + "…"


def _timing(node: Mapping[str, Any], now: float) -> str:
    started, finished = node.get("started_at"), node.get("finished_at")
    if started is not None:
        return duration(max(0.0, (finished if finished is not None else now) - started))
    not_before = node.get("not_before")
    if node["state"] == "pending" and not_before is not None and not_before > now:
        return f"retry in {duration(not_before - now)}"
    return ""


def duration(seconds: float) -> str:
    """``0.42 s``, ``12.3 s``, ``2m05s``, ``1h02m``."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def is_over(view: View) -> bool:
    return bool(view["status"] != "running")


def watch(
    fetch: Callable[[], View],
    console: Console,
    *,
    poll_s: float,
    sleep: Callable[[float], None] = time.sleep,
) -> View:
    """Redraw the run from `fetch()` every `poll_s` s until it is over, then print it once
    more; returns the last view. Ctrl-C propagates once the live area is closed."""
    view = fetch()
    # No redirection of sys.stdout/sys.stderr: a Ctrl-C while Live starts would leave
    # them redirected, and the "stopped watching" line printed after it would be lost.
    with Live(
        render_run(view),
        console=console,
        auto_refresh=False,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as live:
        while not is_over(view):
            sleep(poll_s)
            view = fetch()
            live.update(render_run(view), refresh=True)
    console.print(render_run(view))
    return view

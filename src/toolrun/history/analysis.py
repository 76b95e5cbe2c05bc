"""Slow-tool analysis: for each tool whose p95 is over the slow-call threshold, what its
slow calls had in common (from their recorded arguments) and what to do about it."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.engine import Engine

from toolrun.history.records import CallRecord
from toolrun.history.stats import ToolStats

MIN_CALLS = 5  # fewer calls than this say too little
SAMPLE = 500  # the most recent slow calls looked at per tool
COMMON = 0.5  # a trait shared by at least this share of slow calls is reported
PATH_KEYS = ("path", "file_path", "cwd", "directory")
ROOTS = {"", ".", "./", "/"}
ADVICE = {
    "grep": "search a narrower path or a more specific pattern",
    "glob": "glob a narrower path or a more specific pattern",
    "read": "read the part of the file you need (offset and limit)",
    "bash": "narrow what the command works on, or split it into smaller calls",
    "http_fetch": "fetch less, or from a faster host",
}


class SlowTool(BaseModel):
    """A tool that is slow, with the evidence and a suggestion."""

    tool: str
    p95_ms: float
    calls: int
    slow_calls: int  # over the threshold, in the window
    findings: list[str]
    suggestion: str


def slow_tools(
    engine: Engine, stats: Iterable[ToolStats], since: float, until: float, threshold_ms: float
) -> list[SlowTool]:
    """A SlowTool for every tool (stats grouped by tool) whose p95 is over `threshold_ms`."""
    found = []
    for tool in stats:
        if tool.calls < MIN_CALLS or tool.p95_ms is None or tool.p95_ms <= threshold_ms:
            continue
        slow = _slow_arguments(engine, tool.tool, since, until, threshold_ms)
        findings = _findings(slow)
        wait = tool.mean_queue_wait_ms
        if wait is not None and wait > threshold_ms:
            findings.append(
                f"calls also waited {_duration(wait)} in the queue on average: "
                "add workers at its permission level"
            )
        advice = ADVICE.get(tool.tool, f"see its slow calls: toolrun history --tool {tool.tool}")
        text = f"{tool.tool} is slow (p95 {_duration(tool.p95_ms)} over {tool.calls} calls): "
        found.append(
            SlowTool(
                tool=tool.tool,
                p95_ms=tool.p95_ms,
                calls=tool.calls,
                slow_calls=len(slow),
                findings=findings,
                suggestion=text + "; ".join([advice, *findings]),
            )
        )
    return found


def _slow_arguments(
    engine: Engine, tool: str, since: float, until: float, threshold_ms: float
) -> list[dict[str, Any]]:
    table = CallRecord.__table__  # type: ignore[attr-defined]
    query = (
        select(table.c.arguments)
        .where(
            table.c.finished_at >= since,
            table.c.finished_at < until,
            table.c.tool_name == tool,
            table.c.execution_time_ms > threshold_ms,
        )
        .order_by(table.c.finished_at.desc())
        .limit(SAMPLE)
    )
    with engine.connect() as connection:
        return [arguments or {} for arguments in connection.scalars(query)]


def _findings(calls: list[dict[str, Any]]) -> list[str]:
    """What at least half of these calls' arguments had in common, as sentences."""
    if not calls:
        return []
    checks: list[tuple[Callable[[dict[str, Any]], str | None], str]] = [
        (_root_search, "{share} of slow calls searched the workspace root"),
        (_short_pattern, "{share} of slow calls used a pattern of 2 characters or fewer"),
        (_program, "{share} of slow calls ran `{value}`"),
        (_host, "{share} of slow calls fetched from {value}"),
    ]
    findings = []
    for trait, sentence in checks:
        values = Counter(value for call in calls if (value := trait(call)) is not None)
        if values:
            value, count = values.most_common(1)[0]
            if count / len(calls) >= COMMON:
                findings.append(sentence.format(share=_share(count, len(calls)), value=value))
    return findings


def _root_search(arguments: dict[str, Any]) -> str | None:
    keys = [key for key in PATH_KEYS if key in arguments]
    if "pattern" not in arguments and not keys:
        return None
    paths = [str(arguments[key]).strip() for key in keys]
    return "root" if not paths or any(path in ROOTS for path in paths) else None


def _short_pattern(arguments: dict[str, Any]) -> str | None:
    pattern = arguments.get("pattern")
    if not isinstance(pattern, str):
        return None
    return "short" if len(pattern.strip(".*^$?")) <= 2 else None


def _program(arguments: dict[str, Any]) -> str | None:
    command = arguments.get("command")
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[0] if words else None


def _host(arguments: dict[str, Any]) -> str | None:
    url = arguments.get("url")
    return (urlsplit(url).hostname or None) if isinstance(url, str) else None


def _share(count: int, total: int) -> str:
    return f"{round(100 * count / total)}%"


def _duration(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"

"""Requests people have made of toolrun's built-in tools, in their own words (the task
files in bench/data that are not the judge's), which selection embeds with a tool's
examples: a new phrasing of a request finds the tool through the nearest one already
seen. Kept by tool id (`name@version`), so a plugin's tool of the same name has none and
a built-in tool's new version none until they are written again
(`bench/selection_requests.py TASKS…`)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

REQUESTS_FILE = Path(__file__).with_name("requests.json")


@functools.cache
def shipped_requests() -> dict[str, tuple[str, ...]]:
    data = json.loads(REQUESTS_FILE.read_text(encoding="utf-8"))
    return {tool_id: tuple(requests) for tool_id, requests in data["requests"].items()}


@functools.cache
def needless_requests() -> tuple[str, ...]:
    """The requests made of toolrun that none of its built-in tools could do (`needless`)."""
    data = json.loads(REQUESTS_FILE.read_text(encoding="utf-8"))
    return tuple(data.get("needing_no_tool", ()))


def requests_of(tool_id: str) -> tuple[str, ...]:
    """The requests made of the built-in tool `tool_id` (none for any other)."""
    return shipped_requests().get(tool_id, ())

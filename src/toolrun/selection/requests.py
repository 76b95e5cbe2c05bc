"""Requests people have made of toolrun's built-in tools, in their own words (the task
files in bench/data that are not the judge's), which selection embeds with a tool's
examples: a new phrasing of a request finds the tool through the nearest one already
seen. Kept by tool id (`name@version`), so a plugin's tool of the same name has none and
a built-in tool's new version none until they are written again
(`bench/selection_requests.py TASKS…`). The same files' requests that no built-in tool
serves are kept too (`unserved`)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

REQUESTS_FILE = Path(__file__).with_name("requests.json")


@functools.cache
def _shipped() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(REQUESTS_FILE.read_text(encoding="utf-8"))
    return found


@functools.cache
def shipped_requests() -> dict[str, tuple[str, ...]]:
    """The requests made of each built-in tool, by its id."""
    return {tool_id: tuple(requests) for tool_id, requests in _shipped()["requests"].items()}


@functools.cache
def unserved_requests() -> tuple[str, ...]:
    """The requests made of toolrun that none of its built-in tools serves (`unserved`)."""
    return tuple(_shipped()["unserved"])


@functools.cache
def shipped_sources() -> tuple[str, ...]:
    """The task files the shipped requests come from, by name (in bench/data)."""
    return tuple(_shipped()["from"])


def reread() -> None:
    """Read requests.json anew when next asked (it has just been written)."""
    for cached in (_shipped, shipped_requests, unserved_requests, shipped_sources):
        cached.cache_clear()


def requests_of(tool_id: str) -> tuple[str, ...]:
    """The requests made of the built-in tool `tool_id` (none for any other)."""
    return shipped_requests().get(tool_id, ())

"""What the selection tests share: a bench/ script run in a process of its own, from the
repository's root, and the built-in tools' cards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolrun.selection.cards import ToolCard
from toolrun.tools import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python bench/<script> ARGS…`, its output captured as text; never raises on exit."""
    return subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def builtin_cards() -> list[ToolCard]:
    """The cards of toolrun's built-in tools, as selection over the registry makes them."""
    return [ToolCard.of(tool.descriptor) for tool in ToolRegistry.with_builtins().list()]


def weather_tool() -> ToolCard:
    """A plugin's tool no built-in one does: a city's weather forecast."""
    return ToolCard.parse(
        {
            "name": "weather_forecast",
            "description": "The weather forecast for a city: temperature, rain and wind by day",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    )

"""Plugin call overhead: the wordcount plugin (C → wasm32-wasi) against the same work in a
Python tool, in one run.

Run from the project root: `.venv/bin/python -m bench.plugin_calls [--calls N]`. It builds
examples/plugins/wordcount from source (zig, from the ziglang package), then measures:
- cold: compiling the module (no cache), and loading it from the disk cache instead;
- warm: `PluginTool.run` of a cached module, a fresh Store per call, against
  `PythonWordCount.run` (the same counting in Python) on the same texts, p50 / p95 of N
  calls each, interleaved.
Goal (issue 7): warm plugin overhead ≤ 1 ms over the Python tool. Nothing is asserted;
results go to bench/results/plugin_calls.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from toolrun.config import Settings
from toolrun.plugins import PluginTool, WasmRuntime
from toolrun.plugins.tool import load_plugin_descriptor
from toolrun.tools.base import Tool, ToolContext, ToolOutput

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugins" / "wordcount"
RESULTS = Path(__file__).resolve().parent / "results" / "plugin_calls.json"
GOAL_MS = 1.0
TEXTS = {"small (40 B)": "the quick brown fox jumps over the dog\n", "1 KiB": "lorem ipsum " * 85}


class PythonWordCount(Tool):
    """The plugin's work in Python: the built-in baseline."""

    def __init__(self, plugin: PluginTool) -> None:
        self.descriptor = plugin.descriptor
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        text: str = arguments["text"]
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        return ToolOutput({"words": len(text.split()), "lines": lines, "chars": len(text.encode())})


def build_wordcount(out: Path) -> bytes:
    import importlib.util  # noqa: PLC0415 - the build script is not a package module

    spec = importlib.util.spec_from_file_location("plugin_build", EXAMPLE.parent / "build.py")
    assert spec is not None and spec.loader is not None  # noqa: PT018
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    path: Path = script.build(EXAMPLE / "wordcount.c", out)
    return path.read_bytes()


def timed_ms(run: Any) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="warm calls per case")
    args = parser.parse_args()
    console = Console(width=max(Console().width, 110))
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        wasm = build_wordcount(work)
        descriptor, access = load_plugin_descriptor(
            json.loads((EXAMPLE / "wordcount.json").read_text())
        )
        cache = work / "cache"

        cold_runtime = WasmRuntime(cache)
        compile_ms = timed_ms(lambda: cold_runtime.module(wasm))
        cold_runtime.close()
        loaded_runtime = WasmRuntime(cache)  # a restarted worker: the disk cache
        load_ms = timed_ms(lambda: loaded_runtime.module(wasm))

        plugin = PluginTool(descriptor, wasm, loaded_runtime, workspace=access)
        python = PythonWordCount(plugin)
        context = ToolContext.create(Settings(workspace=work))
        first_call_ms = timed_ms(lambda: plugin.run({"text": "warm up"}, context))
        rows: dict[str, dict[str, float]] = {}
        for label, text in TEXTS.items():
            arguments = {"text": text}
            assert plugin.run(arguments, context).output == python.run(arguments, context).output
            plugin_ms, python_ms = [], []
            for _ in range(args.calls):
                plugin_ms.append(timed_ms(lambda a=arguments: plugin.run(a, context)))
                python_ms.append(timed_ms(lambda a=arguments: python.run(a, context)))
            overhead = statistics.median(plugin_ms) - statistics.median(python_ms)
            rows[label] = {
                "plugin_p50_ms": round(statistics.median(plugin_ms), 3),
                "plugin_p95_ms": round(p95(plugin_ms), 3),
                "python_p50_ms": round(statistics.median(python_ms), 4),
                "overhead_p50_ms": round(overhead, 3),
                "goal_met": overhead <= GOAL_MS,
            }
        loaded_runtime.close()

    table = Table(title=f"wordcount plugin vs Python tool ({args.calls} warm calls each)")
    for column in (
        "case",
        "plugin p50 ms",
        "plugin p95 ms",
        "python p50 ms",
        "overhead ms",
        "goal ≤ 1 ms",
    ):
        table.add_column(column, justify="right")
    for label, row in rows.items():
        table.add_row(
            label,
            f"{row['plugin_p50_ms']:.3f}",
            f"{row['plugin_p95_ms']:.3f}",
            f"{row['python_p50_ms']:.4f}",
            f"{row['overhead_p50_ms']:.3f}",
            "yes" if row["goal_met"] else "no",
        )
    console.print(table)
    console.print(
        f"cold: compile {compile_ms:.1f} ms, load from the disk cache {load_ms:.2f} ms, "
        f"first call after loading {first_call_ms:.2f} ms"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "plugin_calls",
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "machine": {
                    "cpu_count": os.cpu_count(),
                    "python": platform.python_version(),
                    "load_average": os.getloadavg(),
                },
                "module_bytes": len(wasm),
                "cold": {
                    "compile_ms": round(compile_ms, 2),
                    "load_from_cache_ms": round(load_ms, 3),
                    "first_call_ms": round(first_call_ms, 3),
                },
                "warm": rows,
            },
            indent=2,
        )
        + "\n"
    )
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

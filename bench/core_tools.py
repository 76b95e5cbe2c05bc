"""Core tool benchmark: read, grep and glob run in-process against `cat -n` and `rg`.

Run from the project root: `.venv/bin/python bench/core_tools.py [--repeat N]` (`make bench`).
Each case gets one warm-up run and then N timed runs (time.perf_counter); the table and
bench/results/core_tools.json give median and min in ms and the ratio toolrun / baseline
(medians). Nothing here asserts a time: it only prints and writes what it measured.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from toolrun.config import Settings
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, ToolStatus
from toolrun.tools.builtin._ripgrep import COMMON_FLAGS, _find_rg
from toolrun.tools.builtin.grep import rg_flags
from toolrun.tools.validation import with_defaults

RESULTS = Path(__file__).resolve().parent / "results" / "core_tools.json"
READ_FILE_BYTES = 10 * 1024 * 1024
GREP_PATTERN = r"def \w+\(self"
GLOB_PATTERN = "**/*.py"
READ_SPEC_MS = 100.0
GREP_GOAL_RATIO = 1.15

_PROSE = (
    "the request was handled by worker pool after retry because cache entry expired and "
    "upstream service returned partial response with headers timeout connection reset user "
    "session token refreshed config loaded from environment database query took longer than "
    "expected index rebuilt queue drained metrics flushed to disk café naïve Zürich résumé"
)
_WORDS = _PROSE.split()
_LEVELS = ("DEBUG", "INFO ", "INFO ", "INFO ", "WARN ", "ERROR")
_ROUTES = ("/api/v1/items", "/api/v1/users/42", "/healthz", "/api/v2/search?q=term", "/login")


@dataclass
class Case:
    """One row of the table: a toolrun call and its baseline command."""

    name: str
    toolrun_label: str
    baseline_label: str
    toolrun: Callable[[], object]
    baseline: Callable[[], object]
    target: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def stats(runs: list[float]) -> dict[str, Any]:
    return {
        "median_ms": round(statistics.median(runs), 3),
        "min_ms": round(min(runs), 3),
        "runs_ms": [round(ms, 3) for ms in runs],
    }


def timed_pair(
    toolrun: Callable[[], object], baseline: Callable[[], object], repeat: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A warm-up run of each, then `repeat` alternating timed runs (ms) so drift hits both."""
    toolrun()
    baseline()
    runs: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for run, times in zip((toolrun, baseline), runs, strict=True):
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) * 1000)
    return stats(runs[0]), stats(runs[1])


def realistic_text(size: int, seed: int = 20240501) -> str:
    """About `size` bytes of log lines and prose lines, ~80 characters each, UTF-8."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not crypto
    lines: list[str] = []
    total = 0
    number = 0
    while total < size:
        number += 1
        if rng.random() < 0.6:
            line = (
                f"2024-05-01T{number // 3600 % 24:02d}:{number // 60 % 60:02d}:{number % 60:02d}"
                f".{rng.randrange(1000):03d}Z {rng.choice(_LEVELS)} worker-{rng.randrange(8)} "
                f"GET {rng.choice(_ROUTES)} {rng.choice((200, 200, 201, 404, 500))} "
                f"in {rng.randrange(1, 900)} ms"
            )
        else:
            target = max(10, int(rng.gauss(80, 20)))
            words: list[str] = []
            while sum(len(word) + 1 for word in words) < target:
                words.append(rng.choice(_WORDS))
            line = " ".join(words).capitalize() + "."
        lines.append(line)
        total += len(line.encode()) + 1
    return "\n".join(lines) + "\n"


def succeeded(result: ToolResult) -> ToolResult:
    if result.status is not ToolStatus.SUCCESS:
        raise RuntimeError(f"{result.tool_name} failed: {result.status}: {result.error}")
    return result


def machine_facts(rg: str) -> dict[str, Any]:
    cpu_model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    rg_version = subprocess.run(
        [rg, "--version"], stdout=subprocess.PIPE, text=True, check=True
    ).stdout.splitlines()[0]
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "rg": rg,
        "rg_version": rg_version,
    }


def rg_baseline(argv: list[str], ctx: ToolContext) -> bytes:
    """rg the way the tool runs it: same cwd and env, no stdin, output captured."""
    return subprocess.run(
        argv,
        cwd=ctx.workspace.root,
        env=ctx.runner.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    ).stdout


def read_cases(executor: Executor, workspace: Path) -> list[Case]:
    path = workspace / "big.log"
    data = realistic_text(READ_FILE_BYTES).encode("utf-8")
    path.write_bytes(data)
    ctx = ToolContext.create(Settings(workspace=workspace))
    total_lines = data.count(b"\n")  # the text ends with a newline

    def read(**extra: Any) -> ToolResult:
        call = ToolCall(tool_name="read", arguments={"file_path": path.name, **extra})
        return succeeded(executor.execute(call, ctx))

    def cat() -> str:
        out = subprocess.run(["cat", "-n", str(path)], stdout=subprocess.PIPE, check=True).stdout
        return out.decode("utf-8")

    cat_text = cat()
    page = read().output
    whole = read(limit=total_lines).output
    numbered = cat_text.rstrip("\n").split("\n")
    facts = {
        "file_bytes": path.stat().st_size,
        "total_lines": total_lines,
        "page_lines": page["lines_returned"],
        "page_matches_cat": page["content"] == "\n".join(numbered[: page["lines_returned"]]),
        "whole_matches_cat": whole["content"] == cat_text.rstrip("\n"),
    }
    spec = f"< {READ_SPEC_MS:g} ms"
    return [
        Case(
            "read page (2000 lines)",
            "read file_path",
            "cat -n FILE (whole)",
            read,
            cat,
            spec,
            facts,
        ),
        Case(
            f"read whole ({total_lines} lines)",
            f"read limit={total_lines}",
            "cat -n FILE (whole)",
            lambda: read(limit=total_lines),
            cat,
            spec,
            facts,
        ),
    ]


def grep_cases(executor: Executor, ctx: ToolContext, rg: str) -> list[Case]:
    grep = executor.registry.get("grep")
    assert grep is not None
    parameters = grep.descriptor.parameters
    cases = []
    for mode in ("files_with_matches", "content"):
        arguments = {"pattern": GREP_PATTERN, "output_mode": mode}
        argv = [rg, *COMMON_FLAGS, *rg_flags(with_defaults(parameters, arguments))]

        def tool(arguments: dict[str, Any] = arguments) -> ToolResult:
            call = ToolCall(tool_name="grep", arguments=arguments)
            return succeeded(executor.execute(call, ctx))

        def baseline(argv: list[str] = argv) -> bytes:
            return rg_baseline(argv, ctx)

        output = tool().output
        rg_lines = baseline().decode("utf-8", errors="replace").removesuffix("\n").split("\n")
        if mode == "files_with_matches":
            same = output["files"] == sorted(line.removeprefix("./") for line in rg_lines)
        else:
            same = output["content"].split("\n") == [line.removeprefix("./") for line in rg_lines]
        cases.append(
            Case(
                f"grep {mode}",
                f"grep {mode}",
                "rg, same argv",
                tool,
                baseline,
                f"ratio <= {GREP_GOAL_RATIO}",
                {"rg_argv": argv[1:], "entries": output["total"], "matches_rg": same},
            )
        )
    return cases


def glob_case(executor: Executor, ctx: ToolContext, rg: str) -> Case:
    argv = [rg, *COMMON_FLAGS, "--files", "--glob", "*.py"]

    def tool() -> ToolResult:
        call = ToolCall(tool_name="glob", arguments={"pattern": GLOB_PATTERN})
        return succeeded(executor.execute(call, ctx))

    def baseline() -> bytes:
        return rg_baseline(argv, ctx)

    output = tool().output
    listed = baseline().splitlines()
    return Case(
        f"glob {GLOB_PATTERN}",
        f"glob {GLOB_PATTERN}",
        "rg --files -g '*.py'",
        tool,
        baseline,
        "",
        {
            "rg_argv": argv[1:],
            "total_matches": output["total_matches"],
            "returned": output["count"],
            "rg_files": len(listed),
            "matches_rg": output["total_matches"] == len(listed),
        },
    )


def profile(case: Case, top: int) -> str:
    """cProfile of one toolrun run (main thread only), top functions by cumulative time."""
    profiler = cProfile.Profile()
    profiler.runcall(case.toolrun)
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("cumulative").print_stats(top)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case (default 7)")
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of each toolrun case"
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    executor = Executor(ToolRegistry.with_builtins())
    tree_ctx = ToolContext.create(Settings(workspace=stdlib))
    rg = _find_rg(tree_ctx.settings.rg_path)
    machine = machine_facts(rg)
    console = Console(width=max(Console().width, 120))
    console.print(
        f"cpus {machine['cpu_count']} (usable {machine['cpu_affinity']}) {machine['cpu_model']}"
        f" | load {machine['load_average']} | Python {machine['python']}"
    )
    console.print(f"{machine['rg_version']} ({rg}) | {args.repeat} runs + 1 warm-up each")
    console.print(f"grep/glob tree: {stdlib}")

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolrun-bench-") as temp:
        cases = [
            *read_cases(executor, Path(temp)),
            *grep_cases(executor, tree_ctx, rg),
            glob_case(executor, tree_ctx, rg),
        ]
        for case in cases:
            console.print(f"[dim]running {case.name} …[/dim]")
            toolrun, baseline = timed_pair(case.toolrun, case.baseline, args.repeat)
            ratio = toolrun["median_ms"] / baseline["median_ms"]
            rows.append(
                {
                    "name": case.name,
                    "toolrun": {"call": case.toolrun_label, **toolrun},
                    "baseline": {"command": case.baseline_label, **baseline},
                    "ratio": round(ratio, 3),
                    "target": case.target,
                    "details": case.details,
                }
            )
            if args.profile:
                console.print(profile(case, 25), markup=False, highlight=False)

    table = Table(title=f"toolrun core tools (median / min of {args.repeat} runs, ms)")
    for column in ("case", "toolrun med", "min", "baseline", "base med", "min", "ratio"):
        justify = "left" if column in {"case", "baseline"} else "right"
        table.add_column(column, justify=justify)
    table.add_column("target")
    for row in rows:
        table.add_row(
            row["name"],
            f"{row['toolrun']['median_ms']:.1f}",
            f"{row['toolrun']['min_ms']:.1f}",
            row["baseline"]["command"],
            f"{row['baseline']['median_ms']:.1f}",
            f"{row['baseline']['min_ms']:.1f}",
            f"{row['ratio']:.2f}",
            row["target"],
        )
    console.print(table)
    for row in rows:
        checks = ", ".join(f"{k}={v}" for k, v in row["details"].items() if k != "rg_argv")
        console.print(f"  {row['name']}: {checks}", highlight=False)

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "core_tools",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "repeat": args.repeat,
        "warmup": 1,
        "machine": machine,
        "tree": str(stdlib),
        "read_file_bytes": READ_FILE_BYTES,
        "grep_pattern": GREP_PATTERN,
        "glob_pattern": GLOB_PATTERN,
        "results": rows,
    }
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

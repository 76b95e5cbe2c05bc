"""The code tools' costs, measured in one run on the Python standard library.

Run from the project root: `.venv/bin/python -m bench.code_tools [--queries N]`.
- search: cold index build of the whole standard library (files, seconds, files/s), a
  warm query's p50 / p95 over a list of queries (each call also checks every file's
  modification time), and the call after one file was touched (one file reindexed);
  beside it, `grep` (ripgrep) of the same words, the plain-text baseline.
- lsp: the first definition call (starting jedi-language-server) and warm
  definition / references / hover p50 on a fixture package.
Nothing is asserted; results go to bench/results/code_tools.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from toolrun.config import Settings
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult

RESULTS = Path(__file__).resolve().parent / "results" / "code_tools.json"
QUERIES = [
    "JSONDecoder",
    "gather tasks",
    "cookie jar",
    "parse email header",
    "thread pool executor",
    "temporary directory",
    "http server request handler",
    "decimal context rounding",
]
LSP_FIXTURE = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": "class Circle:\n    def area(self) -> float:\n        return 1.0\n\n\n"
    "def make_circle() -> Circle:\n    return Circle()\n",
    "pkg/main.py": "from pkg.shapes import make_circle\n\nmake_circle().area()\n",
}


def timed(run: Callable[[], ToolResult]) -> float:
    started = time.perf_counter()
    result = run()
    elapsed = (time.perf_counter() - started) * 1000
    if not result.ok:
        raise SystemExit(f"{result.tool_name} failed: {result.error}")
    return elapsed


def caller(workspace: Path, home: Path) -> Callable[..., ToolResult]:
    ctx = ToolContext.create(Settings(workspace=workspace, home=home))
    executor = Executor(ToolRegistry.with_builtins())
    return lambda name, **arguments: executor.execute(
        ToolCall(tool_name=name, arguments=arguments), ctx
    )


def p(values: list[float], q: float) -> float:
    return (
        round(statistics.quantiles(values, n=100)[int(q) - 1], 2) if len(values) > 1 else values[0]
    )


def bench_search(root: Path, rounds: int) -> dict[str, Any]:
    workspace = root / "stdlib"
    shutil.copytree(
        sysconfig.get_paths()["stdlib"],
        workspace,
        ignore=shutil.ignore_patterns("__pycache__", "site-packages", "test", "tests", "idlelib"),
    )
    call = caller(workspace, root / "home")
    started = time.perf_counter()
    first = call("search", query="JSONDecoder")
    build_s = time.perf_counter() - started
    files = first.output["indexed_files"]
    warm: list[float] = []
    grep: list[float] = []
    ranked_first: dict[str, str] = {}
    for _ in range(rounds):
        for query in QUERIES:
            warm.append(timed(lambda q=query: call("search", query=q)))
            words = "|".join(query.split())
            grep.append(
                timed(lambda w=words: call("grep", pattern=w, output_mode="files_with_matches"))
            )
    for query in QUERIES:
        top = call("search", query=query, kind="symbol").output["results"][:1]
        ranked_first[query] = (
            f"{top[0]['path']}:{top[0]['line']} {top[0]['symbol']}" if top else "-"
        )
    touched = workspace / "json" / "decoder.py"
    touched.write_text(touched.read_text() + "\n# touched\n")
    update_ms = timed(lambda: call("search", query="JSONDecoder"))
    return {
        "files": files,
        "build_s": round(build_s, 2),
        "files_per_s": round(files / build_s),
        "warm_p50_ms": p(warm, 50),
        "warm_p95_ms": p(warm, 95),
        "grep_p50_ms": p(grep, 50),
        "after_touch_ms": round(update_ms, 2),
        "top_symbol": ranked_first,
    }


def bench_lsp(root: Path, rounds: int) -> dict[str, Any]:
    workspace = root / "lsp"
    for name, text in LSP_FIXTURE.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    call = caller(workspace, root / "home-lsp")
    at = {"file_path": "pkg/main.py", "symbol": "make_circle", "line": 3}
    cold = timed(lambda: call("lsp", operation="definition", **at))
    found: dict[str, Any] = {"cold_definition_ms": round(cold, 1)}
    for operation in ("definition", "references", "hover"):
        samples = [timed(lambda o=operation: call("lsp", operation=o, **at)) for _ in range(rounds)]
        found[f"{operation}_p50_ms"] = p(samples, 50)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5, help="rounds of the query list")
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as scratch:
        search = bench_search(Path(scratch), args.queries)
        lsp = bench_lsp(Path(scratch), args.queries * 4)
    table = Table(title="code tools on the Python standard library")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in [*search.items(), *lsp.items()]:
        if key != "top_symbol":
            table.add_row(key, str(value))
    console.print(table)
    for query, where in search["top_symbol"].items():
        console.print(f"  {query!r} → {where}")
    results = {
        "search": search,
        "lsp": lsp,
        "machine": platform.machine(),
        "python": platform.python_version(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))


if __name__ == "__main__":
    main()

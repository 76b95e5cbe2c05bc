"""Start-up of the SDK and the CLI, as whole processes: `import toolrun.client`,
`toolrun --help`, `toolrun call read --local` (of README.md) and two commands that talk
to the API (`history`, `agents list`) pointed at an address where nothing listens, so
that they measure their start and fail at once, against the bare interpreter
(`python -c pass`) started the same way, interleaved.

Run from the project root: `.venv/bin/python -m bench.startup [--repeat N] [--pycache DIR]`.
The table and bench/results/startup.json give the median and p90 in ms, the median over
the bare interpreter's, the goal, and, from one `-X importtime` run of each, how many
modules it imports and the heaviest top-level ones. Nothing is asserted. `--pycache`
keeps bytecode under DIR (PYTHONPYCACHEPREFIX), as an installed package has it, where
PYTHONDONTWRITEBYTECODE would recompile toolrun's own modules in every process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "startup.json"
TOOLRUN = str(Path(sys.executable).parent / "toolrun")
BARE = "python -c pass"
NOBODY = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused
COMMANDS = {
    BARE: [sys.executable, "-c", "pass"],
    "import toolrun.client": [sys.executable, "-c", "import toolrun.client"],
    "toolrun --help": [TOOLRUN, "--help"],
    "toolrun call read --local": [
        TOOLRUN,
        "call",
        "read",
        "--local",
        "--args",
        '{"file_path": "README.md"}',
    ],
    "toolrun history (API away)": [TOOLRUN, "history", "--limit", "3"],
    "toolrun agents list (API away)": [TOOLRUN, "agents", "list"],
}
FAILING = {"toolrun history (API away)", "toolrun agents list (API away)"}  # exit 2 meant
GOALS_MS = {
    "import toolrun.client": 100,
    "toolrun --help": 300,
    "toolrun call read --local": 400,
    "toolrun history (API away)": 500,
    "toolrun agents list (API away)": 500,
}
# `import time: self | cumulative | name`, the name indented two spaces per level.
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def run_ms(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0 and not _expected_failure(argv, done.returncode):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-500:]!r}")
    return elapsed


def _expected_failure(argv: list[str], code: int) -> bool:
    """A command of FAILING that said the API is away (exit 2, start the platform)."""
    return code == 2 and any(COMMANDS[name] == argv for name in FAILING)


def imports(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """How many modules `argv` imports, and its five heaviest top-level imports (ms,
    cumulative, as -X importtime reports them: inflated by its own bookkeeping)."""
    completed = subprocess.run(
        argv,
        cwd=ROOT,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    found = [m for m in map(IMPORT_LINE.match, completed.stderr.splitlines()) if m]
    top = sorted(
        ((int(m[2]) / 1000, m[4]) for m in found if not m[3]), key=lambda x: x[0], reverse=True
    )
    return {"modules": len(found), "heaviest": [[name, round(ms, 1)] for ms, name in top[:5]]}


def _bytecode(pycache: Path | None, env: dict[str, str]) -> str:
    if pycache is not None:
        return f"kept in {pycache}"
    return "not written" if env.get("PYTHONDONTWRITEBYTECODE") else "next to the sources"


def main() -> None:
    parser = argparse.ArgumentParser(description="Start-up of the SDK and the CLI.")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--pycache", type=Path, help="keep bytecode here (PYTHONPYCACHEPREFIX)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env["TOOLRUN_API"] = NOBODY  # the commands that talk to the API find nobody there
    if args.pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(args.pycache.resolve())
    for argv in COMMANDS.values():
        run_ms(argv, env)  # warm-up: the page cache, and the bytecode under --pycache
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, argv in COMMANDS.items():
            samples[name].append(run_ms(argv, env))
    bare = statistics.median(samples[BARE])
    results = {
        name: {
            "median_ms": round(statistics.median(times), 1),
            "p90_ms": round(statistics.quantiles(times, n=10)[-1], 1),
            "over_bare_ms": round(statistics.median(times) - bare, 1),
            "goal_ms": GOALS_MS.get(name),
            **imports(COMMANDS[name], env),
        }
        for name, times in samples.items()
    }
    table = Table("command", "median ms", "p90 ms", "over bare ms", "goal ms", "modules")
    heaviest = Table("command", "heaviest top-level imports (ms, -X importtime)")
    for name, row in results.items():
        table.add_row(
            name,
            f"{row['median_ms']:.0f}",
            f"{row['p90_ms']:.0f}",
            f"{row['over_bare_ms']:+.0f}",
            "" if row["goal_ms"] is None else f"< {row['goal_ms']}",
            str(row["modules"]),
        )
        heaviest.add_row(name, ", ".join(f"{module} {ms:.0f}" for module, ms in row["heaviest"]))
    console = Console()
    console.print(table)
    console.print(heaviest)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "cpus": os.cpu_count(),
                "load": os.getloadavg(),
                "python": platform.python_version(),
                "bytecode": _bytecode(args.pycache, env),
                "repeat": args.repeat,
                "results": results,
            },
            indent=2,
        )
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

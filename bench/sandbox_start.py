"""What the jail adds to starting a tool process: `/bin/true` through ProcessRunner, plain
and jailed (namespaces, the filesystem view, Landlock, seccomp; then also the allowlist
proxy's forwarder), interleaved in one run, in a process that has loaded what a worker
loads (its fork is what each start copies).

Run from the project root: `.venv/bin/python -m bench.sandbox_start [--repeat N]`. The
table and bench/results/sandbox_start.json give the median and p90 in ms and the median's
overhead over plain, with and without cgroup tracking. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from toolrun.config import Settings
from toolrun.sandbox.confinement import base_confinement, enforcement
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.network import NetworkPolicy
from toolrun.sandbox.output import BoundedBytes
from toolrun.sandbox.proxy import AllowlistProxy
from toolrun.sandbox.runner import ProcessRunner
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.app import create_celery_app

RESULTS = Path(__file__).resolve().parent / "results" / "sandbox_start.json"


def once_ms(runner: ProcessRunner) -> float:
    started = time.perf_counter()
    runner.run(
        ["/bin/true"], timeout_s=10, stdout=BoundedBytes(1 << 16), stderr=BoundedBytes(1 << 16)
    )
    return (time.perf_counter() - started) * 1000


def measure(settings: Settings, *, cgroups: bool, repeat: int) -> dict[str, dict[str, float]]:
    plain = ProcessRunner(
        cwd=settings.workspace,
        env={"PATH": "/usr/bin:/bin"},
        limits=ResourceLimits(memory_bytes=settings.max_memory_bytes),
        use_cgroups=cgroups,
        max_processes=settings.sandbox_max_processes,
    )
    with AllowlistProxy(NetworkPolicy(("127.0.0.1",)), lambda refusal: None) as socket_path:
        runners = {
            "plain": plain,
            "jail": replace(plain, jail=base_confinement(settings, None)),
            "jail + proxy": replace(plain, jail=base_confinement(settings, str(socket_path))),
        }
        for runner in runners.values():
            once_ms(runner)  # warm-up
        samples: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(repeat):
            for name, runner in runners.items():
                samples[name].append(once_ms(runner))
    base = statistics.median(samples["plain"])
    return {
        name: {
            "median_ms": round(statistics.median(times), 2),
            "p90_ms": round(statistics.quantiles(times, n=10)[-1], 2),
            "overhead_ms": round(statistics.median(times) - base, 2),
        }
        for name, times in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="The jail's cost per tool process.")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    # What a worker process holds when it forks a tool: Celery, the registry, the tools.
    create_celery_app(Settings(redis_url="redis://127.0.0.1:1/0"))
    ToolRegistry.with_builtins()
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as home:
        settings = Settings(workspace=Path(workspace), home=Path(home))
        state = enforcement(settings)
        if not state.filesystem_isolated:
            raise SystemExit(f"tool processes cannot be jailed here: {state.filesystem}")
        for cgroups in (False, True):
            label = "cgroups" if cgroups else "no cgroups"
            results[label] = measure(settings, cgroups=cgroups, repeat=args.repeat)
    table = Table(
        "tracking", "variant", "median ms", "p90 ms", "overhead ms", title=__doc__.splitlines()[0]
    )
    for label, rows in results.items():
        for name, row in rows.items():
            table.add_row(
                label,
                name,
                f"{row['median_ms']:.1f}",
                f"{row['p90_ms']:.1f}",
                f"{row['overhead_ms']:+.1f}",
            )
    Console().print(table)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "isolation": state.filesystem,
                "repeat": args.repeat,
                "results": results,
            },
            indent=2,
        )
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

"""What the network jail costs per subprocess: `true` through ProcessRunner, plain, jailed,
and jailed with the allowlisting proxy, with and without cgroup tracking.

Run from the project root: `.venv/bin/python -m bench.network_jail [--repeat N]`. The three
variants run interleaved, N times each; the table and bench/results/network_jail.json give
the median and p90 in ms and the median's overhead over plain. Nothing is asserted.
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

from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.network import NetworkJail, NetworkPolicy, isolation_problem
from toolrun.sandbox.output import BoundedBytes
from toolrun.sandbox.proxy import AllowlistProxy
from toolrun.sandbox.runner import ProcessRunner, sandbox_env

RESULTS = Path(__file__).resolve().parent / "results" / "network_jail.json"


def once_ms(runner: ProcessRunner) -> float:
    started = time.perf_counter()
    runner.run(
        ["/bin/true"], timeout_s=10, stdout=BoundedBytes(1 << 16), stderr=BoundedBytes(1 << 16)
    )
    return (time.perf_counter() - started) * 1000


def measure(workspace: Path, *, cgroups: bool, repeat: int) -> dict[str, dict[str, float]]:
    plain = ProcessRunner(
        cwd=workspace,
        env=sandbox_env(path="/usr/bin:/bin", home=workspace),
        limits=ResourceLimits(),
        use_cgroups=cgroups,
    )
    with AllowlistProxy(NetworkPolicy(()), lambda refusal: None) as socket_path:
        runners = {
            "plain": plain,
            "jail": replace(plain, network=NetworkJail()),
            "jail + proxy": replace(plain, network=NetworkJail(socket_path)),
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
    parser = argparse.ArgumentParser(description="The network jail's cost per subprocess.")
    parser.add_argument("--repeat", type=int, default=150)
    args = parser.parse_args()
    problem = isolation_problem()
    if problem is not None:
        raise SystemExit(f"network namespaces are not available here: {problem}")
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as workspace:
        for cgroups in (False, True):
            label = "cgroups" if cgroups else "no cgroups"
            results[label] = measure(Path(workspace), cgroups=cgroups, repeat=args.repeat)
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
            {"machine": platform.platform(), "repeat": args.repeat, "results": results}, indent=2
        )
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

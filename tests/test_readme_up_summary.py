"""The README's sample of `toolrun up`'s summary is what the code prints, line for line
(a platform started in ~/myproject, as the README says)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from toolrun.cli import platform
from toolrun.config import Settings
from toolrun.embedded.redis_server import RedisServer
from toolrun.sandbox.confinement import Enforcement

README = Path(__file__).resolve().parents[1] / "README.md"
HOME = Path("/home/you/.local/state/toolrun/myproject-1a2b3c4d5e")
BASE = "http://127.0.0.1:8000"


def readme_sample() -> list[str]:
    """The summary's lines in the README: from "toolrun is up" to the `echo` line."""
    text = README.read_text(encoding="utf-8")
    block = text.split("`toolrun up` ends with a summary like this one", 1)[1]
    lines = block.split("```", 2)[1].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("toolrun is up"))
    return lines[first : lines.index("Ctrl-C stops everything.")]


def test_the_readme_shows_the_summary_toolrun_up_prints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AGENT_RATE_PER_S", "AGENT_MAX_QUEUED", "QUEUE_BOUND"):
        monkeypatch.delenv(f"TOOLRUN_{name}", raising=False)
    printed = io.StringIO()
    console = Console(file=printed, width=500, color_system=None)
    monkeypatch.setattr(platform, "out", console)
    pools = dict.fromkeys(["read_only", "read_write", "execute", "admin"], 4) | {"delegation": 2}
    redis = RedisServer(HOME / "redis", port=35847)
    isolated = Enforcement("isolated (namespaces+landlock+seccomp)", "isolated")

    # As `up` prints it, in its order.
    platform._announce(
        Path("/home/you/myproject"), BASE, 5555, redis.display_url, HOME / "admin.token", True
    )
    platform._announce_processes(platform._shown_pools(pools, None), isolated, HOME / "logs")
    console.print(f"  Sharing  {platform._shown_sharing(Settings())}", soft_wrap=True)
    platform._paste_lines(BASE, HOME / "admin.token")

    shown = printed.getvalue().replace("/home/you/.local", "~/.local").splitlines()
    assert readme_sample() == shown

"""What starting up loads: `import toolrun.client`, `toolrun --help` and `toolrun call
--local`, each in a fresh interpreter. Module presence is checked, never wall time
(bench/startup.py measures that)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The platform's services and their drivers: neither the SDK nor the CLI's start needs them.
PLATFORM = (
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "celery",
    "kombu",
    "redis",
    "mcp",
)
# What single tools need (search, terminal, bash's parser): loaded by their own calls.
TOOL_PARTS = ("tantivy", "tree_sitter", "pexpect", "pyte", "bashlex")
MODULES = "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
COMMAND = """
import sys
from toolrun.cli import main
sys.argv = ["toolrun", *{args!r}]
try:
    main()
except SystemExit:
    pass
"""


def loaded_by(code: str, cwd: Path) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (TOOLRUN_* unset)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    completed = subprocess.run(
        [sys.executable, "-c", code + MODULES],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        timeout=60,
        check=True,
    )
    return set(json.loads(completed.stdout.splitlines()[-1]))


def packages(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def test_the_sdk_imports_neither_the_platform_nor_its_own_http_and_models(
    tmp_path: Path,
) -> None:
    loaded = packages(loaded_by("import toolrun.client", tmp_path))

    assert loaded.isdisjoint(PLATFORM + TOOL_PARTS)
    # httpx and the pydantic models come with the first client and the first result.
    assert loaded.isdisjoint({"httpx", "pydantic", "jsonschema", "asyncio"})


def test_help_imports_no_group_module_settings_or_registry(tmp_path: Path) -> None:
    loaded = loaded_by(COMMAND.format(args=["--help"]), tmp_path)

    assert packages(loaded).isdisjoint(PLATFORM + TOOL_PARTS + ("pydantic_settings",))
    assert "toolrun.cli.mcp" not in loaded
    assert "toolrun.cli.agents" not in loaded
    assert "toolrun.tools.registry" not in loaded


def test_a_local_read_loads_the_tools_but_not_what_other_tools_need(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    args = ["call", "read", "--local", "--args", '{"file_path": "a.txt"}']

    loaded = loaded_by(COMMAND.format(args=args), workspace)

    assert "toolrun.tools.builtin.read" in loaded
    # The Task tool's descriptor names the sub-agents' folder without their YAML parser.
    assert packages(loaded).isdisjoint(PLATFORM + TOOL_PARTS + ("httpx", "yaml"))
    # Sub-agents run through the platform's call lifecycle: only a Task call imports it.
    assert "toolrun.subagents.delegation" not in loaded


def test_permission_levels_come_without_the_approval_prompts(tmp_path: Path) -> None:
    loaded = loaded_by("import toolrun.permissions.levels", tmp_path)

    assert "toolrun.permissions.approvals" not in loaded
    assert "rich" not in packages(loaded)

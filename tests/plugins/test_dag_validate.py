"""`toolrun dag validate` knows the plugins registered on the platform, as `dag run` does."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.plugins.conftest import EXAMPLES
from toolrun.cli import app
from toolrun.config import Settings
from toolrun.plugins.registry import PluginRegistry
from toolrun.plugins.tool import load_plugin_descriptor
from toolrun.tools.registry import ToolRegistry

PLAN = """
nodes:
  - id: count
    tool: wordcount
    arguments: {text: "three small words"}
"""


def test_validate_accepts_a_registered_plugin(tmp_path: Path, built: dict[str, bytes]) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    env = {"TOOLRUN_HOME": str(tmp_path / "home"), "TOOLRUN_WORKSPACE": str(tmp_path)}

    def validate() -> tuple[int, str]:
        result = CliRunner().invoke(app, ["dag", "validate", str(plan)], env=env)
        return result.exit_code, " ".join(result.output.split())

    code, said = validate()
    assert code == 1
    assert "node 'count': unknown tool: wordcount" in said

    settings = Settings(home=tmp_path / "home", workspace=tmp_path)
    described = json.loads((EXAMPLES / "wordcount" / "wordcount.json").read_text())
    descriptor, access = load_plugin_descriptor(described)
    store = PluginRegistry(ToolRegistry.with_builtins(), settings.database, None).store
    store.register(descriptor, access, built["wordcount"])

    assert validate() == (0, "valid: 1 node")

"""The example plans run to the end on the real platform."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.integration.platform import Platform
from tests.integration.test_dags import finished, nodes, submit
from toolrun.dag import load_plan

EXAMPLES = Path(__file__).parents[2] / "examples" / "plans"


@pytest.fixture
def project(platform_workspace: Path) -> Path:
    """Python and Markdown files for the examples to find."""
    (platform_workspace / "README.md").write_text("# Project\n\nSome text.\n")
    docs = platform_workspace / "exampledocs"
    docs.mkdir(exist_ok=True)
    for index in range(7):
        (docs / f"page{index}.md").write_text(f"# Page {index}\n\n## Part\n")
    (platform_workspace / "exampledocs" / "app.py").write_text("x = 1  # TODO: name it\n")
    (platform_workspace / ".flaky-ok").unlink(missing_ok=True)
    return platform_workspace


def run_example(api: httpx.Client, name: str) -> dict[str, object]:
    plan = load_plan((EXAMPLES / name).read_text(), name=name)
    return finished(api, submit(api, plan.model_dump(mode="json", exclude_none=True)))


def test_todo_report(dag_platform: Platform, api: httpx.Client, project: Path) -> None:
    view = run_example(api, "todo-report.yaml")

    assert view["status"] == "succeeded", view
    found = nodes(view)
    assert {"path": "exampledocs/app.py", "count": 1} in found["count"]["output"]["counts"]
    assert "exampledocs/app.py:1:" in found["where"]["output"]["content"]


def test_fan_out_fan_in(dag_platform: Platform, api: httpx.Client, project: Path) -> None:
    view = run_example(api, "fan-out-fan-in.yaml")

    assert view["status"] == "succeeded", view
    found = nodes(view)
    assert sorted(found["headings"]["depends_on"]) == [f"read{i}" for i in range(6)]
    assert all("# " in found[f"read{i}"]["output"]["content"] for i in range(6))


def test_flaky_retry(dag_platform: Platform, api: httpx.Client, project: Path) -> None:
    view = run_example(api, "flaky-retry.yaml")

    assert view["status"] == "succeeded", view
    assert nodes(view)["flaky"]["attempts"] == 2
    assert nodes(view)["after"]["output"]["stdout"].startswith("3 README.md")

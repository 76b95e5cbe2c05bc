"""The example plans in examples/plans are valid against the built-in tools (and the
workflow pack's, which its example uses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.dag import load_plan, plan_problems
from toolrun.tools.loading import registry_with

EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "plans").glob("*.yaml"))


def test_there_are_at_least_three_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_each_example_is_a_valid_plan(path: Path) -> None:
    plan = load_plan(path.read_text(), name=path.name)

    assert plan_problems(plan, registry_with([], ["workflow"])) == []

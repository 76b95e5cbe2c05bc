"""bench/selection.py runs on a slice of the development data and prints, as its last
line, one JSON object of what it measured (only the issue's keys), and before it whether
meaning was weighed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/selection.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def harness(*args: str) -> dict[str, Any]:
    """The last line's measures, and whether meaning was weighed (the line before)."""
    done = run(*args)
    assert done.returncode == 0, done.stderr
    *_, by, last = done.stdout.strip().splitlines()
    measured: dict[str, Any] = json.loads(last)
    assert by in ("selection by words", "selection by words and meaning")
    return {**measured, "by meaning": by.endswith("meaning")}


def test_bfcl_with_answers_reports_tool_and_argument_accuracy() -> None:
    measured = harness(
        "bfcl", str(DATA / "bfcl_multiple.json"), str(DATA / "bfcl_multiple_answers.json")
    )

    assert set(measured) == {"n", "top1", "arg_accuracy", "p50_ms", "by meaning"}
    assert measured["n"] == 30
    assert measured["top1"] >= 0.8  # 0.925 on all 200
    assert 0 <= measured["arg_accuracy"] <= measured["top1"]


def test_bfcl_without_answers_is_irrelevance_data(encoder: Encoder) -> None:
    by_meaning = harness("bfcl", str(DATA / "bfcl_irrelevance.json"))
    by_words = harness("--lexical", "bfcl", str(DATA / "bfcl_irrelevance.json"))

    assert set(by_meaning) == {"n", "no_tool_accuracy", "p50_ms", "by meaning"}
    assert by_meaning["by meaning"]
    assert not by_words["by meaning"]
    assert by_words["no_tool_accuracy"] >= 0.6  # 0.76 on all 240
    # Meaning tells irrelevant tools better: 0.70 against 0.60 here, 0.82 against 0.76
    # on all 240.
    assert by_meaning["no_tool_accuracy"] > by_words["no_tool_accuracy"]


def test_seal_reports_recall_top1_and_time() -> None:
    measured = harness("seal", str(DATA / "seal_tools.jsonl"), str(DATA / "seal_queries.jsonl"))

    assert set(measured) == {"n", "recall_at_5", "top1", "p50_ms", "by meaning"}
    assert measured["recall_at_5"] >= 0.8
    assert measured["p50_ms"] > 0


@pytest.mark.parametrize(
    "args", [["bfcl"], ["seal", "only-one-file"], ["nope", "x"], ["bfcl", "missing.json"]]
)
def test_bad_usage_exits_non_zero_without_a_traceback(args: list[str]) -> None:
    done = run(*args)

    assert done.returncode != 0
    assert "Traceback" not in done.stderr

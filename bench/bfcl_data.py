"""BFCL's data as the selection benchmarks read it: its files (one JSON object a line),
a question's text, and its possible-answer matching of arguments."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def json_lines(path: Path) -> list[dict[str, Any]]:
    """One JSON object per line (BFCL's .json files are too)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def question_text(record: dict[str, Any]) -> str:
    turns = record["question"]
    messages = turns[0] if turns and isinstance(turns[0], list) else turns
    return " ".join(m["content"] for m in messages if m.get("role") == "user")


def arguments_match(produced: dict[str, Any], accepted: dict[str, list[Any]]) -> bool:
    """BFCL possible-answer matching: every produced argument is a parameter of the
    answer with an accepted value; every parameter whose accepted values lack "" is
    produced."""
    if set(produced) - set(accepted):
        return False
    for name, values in accepted.items():
        if name not in produced:
            if "" not in values:
                return False
        elif not any(same(produced[name], value) for value in values):
            return False
    return True


def same(produced: Any, expected: Any) -> bool:
    if isinstance(expected, str) and isinstance(produced, str):
        return _plain(produced) == _plain(expected)
    if isinstance(expected, bool) or isinstance(produced, bool):
        return produced is expected
    if isinstance(expected, int | float) and isinstance(produced, int | float):
        return float(produced) == float(expected)
    if isinstance(expected, list) and isinstance(produced, list):
        return len(expected) == len(produced) and all(map(same, produced, expected))
    if isinstance(expected, dict) and isinstance(produced, dict):
        return arguments_match(produced, expected)
    return bool(produced == expected)


def _plain(text: str) -> str:
    """BFCL's string normalisation: lowercase, no spaces or ,./-_*^ punctuation."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower()

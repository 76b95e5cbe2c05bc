"""Tool selection measured on public benchmark data (../shared/data/toolsel/README.md).

    python bench/selection.py [--lexical] bfcl QUESTIONS.json [ANSWERS.json]
        top-1 tool accuracy and argument accuracy (BFCL possible-answer matching); with
        no answers file the questions are irrelevance data: "no suitable tool" accuracy.
    python bench/selection.py [--lexical] seal TOOLS.jsonl QUERIES.jsonl
        recall@5 and top-1 over the whole registry in TOOLS.jsonl, p50 selection time.

With the embedding model installed (the `semantic` extra), selection goes by meaning as
well as by words; --lexical measures words alone. Each prints a table (to stderr), then
a line saying which ("selection by words" or "selection by words and meaning") and, as
its last line, one JSON object of what it measured.
Nothing is asserted. Run from the repository root with the project installed.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Selector
from toolrun.selection.semantic import EncoderUnavailable, load_encoder

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder


def json_lines(path: Path) -> list[dict[str, Any]]:
    """One JSON object per line (BFCL's .json files are too)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def question_text(record: dict[str, Any]) -> str:
    turns = record["question"]
    messages = turns[0] if turns and isinstance(turns[0], list) else turns
    return " ".join(m["content"] for m in messages if m.get("role") == "user")


def bfcl(questions: Path, answers: Path | None, encoder: Encoder | None) -> dict[str, Any]:
    records = json_lines(questions)
    truth = {r["id"]: r["ground_truth"] for r in json_lines(answers)} if answers else {}
    right = args_right = no_tool = 0
    times = []
    for record in records:
        selector = Selector([ToolCard.parse(f) for f in record["function"]], encoder)
        selection = selector.select(question_text(record))
        times.append(selection.elapsed_ms)
        if not truth:
            no_tool += selection.chosen is None
            continue
        [expected] = truth[record["id"]]
        [(name, accepted)] = expected.items()
        if selection.chosen == name:
            right += 1
            args_right += arguments_match(selection.arguments or {}, accepted)
    n = len(records)
    measured: dict[str, Any] = {"n": n, "p50_ms": round(statistics.median(times), 3)}
    if truth:
        measured |= {"top1": round(right / n, 4), "arg_accuracy": round(args_right / n, 4)}
    else:
        measured["no_tool_accuracy"] = round(no_tool / n, 4)
    return measured


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


def seal(tools: Path, queries: Path, encoder: Encoder | None) -> dict[str, Any]:
    cards = [ToolCard.parse(record) for record in json_lines(tools)]
    selector = Selector(cards, encoder)
    recall, top1, times = [], 0, []
    records = json_lines(queries)
    for record in records:
        gold = {call["api"] for call in record["calling"]}
        selection = selector.select(record["query"], top_k=5)
        times.append(selection.elapsed_ms)
        names = [c.name for c in selection.candidates]
        recall.append(len(gold & set(names)) / len(gold))
        top1 += bool(names) and names[0] in gold
    return {
        "n": len(records),
        "recall_at_5": round(statistics.fmean(recall), 4),
        "top1": round(top1 / len(records), 4),
        "p50_ms": round(statistics.median(times), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lexical", action="store_true", help="words only, no embeddings")
    parser.add_argument("kind", choices=["bfcl", "seal"])
    parser.add_argument("files", nargs="+", type=Path)
    options = parser.parse_args()
    wanted = (1, 2) if options.kind == "bfcl" else (2,)
    if len(options.files) not in wanted:
        parser.error("bfcl QUESTIONS [ANSWERS] or seal TOOLS QUERIES")
    encoder = None
    if not options.lexical:
        try:
            encoder = load_encoder()
        except EncoderUnavailable as exc:
            sys.stderr.write(f"words only: {exc}\n")
    try:
        if options.kind == "bfcl":
            second = options.files[1] if len(options.files) > 1 else None
            measured = bfcl(options.files[0], second, encoder)
        else:
            measured = seal(options.files[0], options.files[1], encoder)
    except OSError as exc:
        parser.error(f"cannot read {exc.filename}: {exc.strerror}")
    except (ValueError, KeyError, TypeError) as exc:
        parser.error(f"the data is not in the {options.kind} format: {exc!r}")
    table = Table(title=f"tool selection: {options.kind}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in measured.items():
        table.add_row(name, str(value))
    table.add_row("semantic", str(encoder is not None))
    Console(stderr=True).print(table)
    by = "words and meaning" if encoder is not None else "words"
    sys.stdout.write(f"selection by {by}\n{json.dumps(measured)}\n")


if __name__ == "__main__":
    main()

"""Tool selection measured on public benchmark data (../shared/data/toolsel/README.md).

    python bench/selection.py [--lexical] bfcl QUESTIONS.json [ANSWERS.json]
        top-1 tool accuracy and argument accuracy (BFCL possible-answer matching); with
        no answers file the questions are irrelevance data: "no suitable tool" accuracy.
    python bench/selection.py [--lexical] seal TOOLS.jsonl QUERIES.jsonl
        recall@5 and top-1 over the whole registry in TOOLS.jsonl, p50 selection time;
        the share whose chosen tool is one of the query's, and the share answered "no
        suitable tool" with the query's own tools blacklisted (step 4 out of sample).
    python bench/selection.py [--lexical] registry TASKS.jsonl
        toolrun's built-in tools as the registry, each task's right tool named (`tool`,
        null where none fits): top-1 where one fits (and how often it is ranked first),
        "no suitable tool" accuracy where none does, p50 selection time.
    python bench/selection.py [--lexical] calibrate BFCL_DIR [--write [FILE]]
        step 4's judge (`toolrun.selection.judge`) on every development set at once:
        each set left out in turn (fitted on the others, scored on it), each set's
        questions of tools the judge was not fitted on (FOLDS folds of every set's
        questions, each scored by the judge fitted on the other folds' questions that
        offer none of its tools), then fitted on all; one table of top-1 (or "no
        suitable tool") and argument accuracy per set, by words and, with the model, by
        meaning; then a table of each set scored by the judge fitted on all with its bar
        moved (the `min_confidence` trade); and a table of how well each judge, on
        tools it was not fitted on, tells a fit from a near miss: each set's AUC
        against the sets where no tool fits, its top-1 at the bar that refuses 0.85 of
        those, and their share refused at the bar that gets 0.90 of it right (the
        issue's goals); last, the registry's request files each left out of the
        requests (top-1 and "no suitable tool" per file, then all; no judge is fitted
        on them: bench/registry_tasks.py). --write stores the judges fitted on all sets in
        src/toolrun/selection/judge.json (or FILE) (bench/selection_judge.py).

With the embedding model installed (the `semantic` extra), selection goes by meaning as
well as by words; --lexical measures words alone. Each prints a table (to stderr), then
a line saying which ("selection by words" or "selection by words and meaning") and, as
its last line, one JSON object of what it measured.
Nothing is asserted. Run from the repository root with the project installed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __package__ in (None, ""):  # run as a file (python bench/selection.py): find `bench`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from bench.bfcl_data import arguments_match, json_lines, question_text
from bench.registry_tasks import builtin_selector
from bench.selection_judge import JUDGE_FILE, calibrate
from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Selector
from toolrun.selection.semantic import EncoderUnavailable, load_encoder

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder


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


def seal(tools: Path, queries: Path, encoder: Encoder | None) -> dict[str, Any]:
    """Search over the whole registry; and step 4's judge on data it was not fitted on:
    the share whose chosen tool is one of the query's, and the share answered "no
    suitable tool" with the query's own tools blacklisted (its other tools may still do
    part of what it asks: Seal-Tools has many tools alike)."""
    cards = [ToolCard.parse(record) for record in json_lines(tools)]
    selector = Selector(cards, encoder)
    recall, top1, chosen, refused, times = [], 0, 0, 0, []
    records = json_lines(queries)
    for record in records:
        gold = {call["api"] for call in record["calling"]}
        selection = selector.select(record["query"], top_k=5)
        times.append(selection.elapsed_ms)
        names = [c.name for c in selection.candidates]
        recall.append(len(gold & set(names)) / len(gold))
        top1 += bool(names) and names[0] in gold
        chosen += selection.chosen in gold
        refused += selector.select(record["query"], top_k=5, excluded=gold).chosen is None
    n = len(records)
    return {
        "n": n,
        "recall_at_5": round(statistics.fmean(recall), 4),
        "top1": round(top1 / n, 4),
        "chosen": round(chosen / n, 4),
        "no_tool_without_its_tools": round(refused / n, 4),
        "p50_ms": round(statistics.median(times), 3),
    }


def registry(tasks: Path, encoder: Encoder | None) -> dict[str, Any]:
    """Selection over toolrun's built-in tools, as `toolrun select` does it."""
    selector = builtin_selector(encoder)
    right = ranked_first = fitting = refused = 0
    times = []
    records = json_lines(tasks)
    unknown = {r["tool"] for r in records} - {None, *selector.by_name}
    if unknown:
        raise ValueError(f"not built-in tools: {', '.join(sorted(unknown))}")
    for record in records:
        selection = selector.select(record["task"])
        times.append(selection.elapsed_ms)
        wanted = record["tool"]
        if wanted is None:
            refused += selection.chosen is None
            continue
        fitting += 1
        right += selection.chosen == wanted
        ranked_first += bool(selection.candidates) and selection.candidates[0].name == wanted
    none_fits = len(records) - fitting
    return {
        "n": len(records),
        "top1": round(right / fitting, 4) if fitting else None,
        "ranked_first": round(ranked_first / fitting, 4) if fitting else None,
        "no_tool_accuracy": round(refused / none_fits, 4) if none_fits else None,
        "p50_ms": round(statistics.median(times), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lexical", action="store_true", help="words only, no embeddings")
    parser.add_argument(
        "--write",
        nargs="?",
        const=JUDGE_FILE,
        type=Path,
        metavar="FILE",
        help=f"calibrate: store the judges fitted on all sets (default: {JUDGE_FILE.name})",
    )
    parser.add_argument("kind", choices=["bfcl", "seal", "registry", "calibrate"])
    parser.add_argument("files", nargs="+", type=Path)
    options = parser.parse_args()
    wanted = {"bfcl": (1, 2), "seal": (2,), "registry": (1,), "calibrate": (1,)}[options.kind]
    if len(options.files) not in wanted:
        parser.error(
            "bfcl QUESTIONS [ANSWERS], seal TOOLS QUERIES, registry TASKS or calibrate BFCL_DIR"
        )
    if options.write is not None and options.kind != "calibrate":
        parser.error("--write is for calibrate")
    encoder = None
    if not options.lexical:
        try:
            encoder = load_encoder()
        except EncoderUnavailable as exc:
            sys.stderr.write(f"words only: {exc}\n")
    if options.kind == "calibrate":
        try:
            calibrate(options.files[0], encoder, write=options.write)
        except OSError as exc:
            parser.error(f"cannot read {exc.filename}: {exc.strerror}")
        return
    try:
        if options.kind == "bfcl":
            second = options.files[1] if len(options.files) > 1 else None
            measured = bfcl(options.files[0], second, encoder)
        elif options.kind == "registry":
            measured = registry(options.files[0], encoder)
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

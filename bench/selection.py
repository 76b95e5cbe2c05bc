"""Tool selection measured on public benchmark data (../shared/data/toolsel/README.md).

    python bench/selection.py [--lexical] bfcl QUESTIONS.json [ANSWERS.json]
        top-1 tool accuracy and argument accuracy (BFCL possible-answer matching); with
        no answers file the questions are irrelevance data: "no suitable tool" accuracy.
    python bench/selection.py [--lexical] seal TOOLS.jsonl QUERIES.jsonl
        recall@5 and top-1 over the whole registry in TOOLS.jsonl, p50 selection time;
        the share whose chosen tool is one of the query's, and the share answered "no
        suitable tool" with the query's own tools blacklisted (step 4 out of sample).
    python bench/selection.py [--lexical] calibrate BFCL_DIR [--write [FILE]]
        step 4's judge (`toolrun.selection.judge`) on every development set at once:
        each set left out in turn (fitted on the others, scored on it), each set's
        questions of tools the judge was not fitted on (FOLDS folds of every set's
        questions, each scored by the judge fitted on the other folds' questions that
        offer none of its tools), then fitted on all; one table of top-1 (or "no
        suitable tool") and argument accuracy per set, by words and, with the model, by
        meaning; then a table of each set scored by the judge fitted on all with its bar
        moved (the `min_confidence` trade). --write stores the judges fitted on all sets
        in src/toolrun/selection/judge.json (or FILE).

With the embedding model installed (the `semantic` extra), selection goes by meaning as
well as by words; --lexical measures words alone. Each prints a table (to stderr), then
a line saying which ("selection by words" or "selection by words and meaning") and, as
its last line, one JSON object of what it measured.
Nothing is asserted. Run from the repository root with the project installed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from toolrun.selection.arguments import fill
from toolrun.selection.calibration import Example, fit_judge
from toolrun.selection.cards import ToolCard
from toolrun.selection.judge import BY_MEANING, BY_WORDS, Judge
from toolrun.selection.pipeline import FIT_DEPTH, Selector
from toolrun.selection.semantic import EncoderUnavailable, load_encoder
from toolrun.tools.registry import ToolRegistry

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


# Step 4's judge, fitted and checked on the development sets (issue 27): BFCL's four
# (whether a tool in each question's list fits), and toolrun's own registry with tasks
# written for it (bench/data/toolrun_tasks.jsonl: the right built-in tool, or none).
BFCL_SETS = {"multiple": True, "live_simple": True, "simple_python": True, "irrelevance": False}
REGISTRY_SET = "toolrun"
WIDE = 110  # columns for the calibration table
FOLDS = 5  # of every set's questions (`Judged.fold`)
REGISTRY_TASKS = Path(__file__).parent / "data" / "toolrun_tasks.jsonl"
JUDGE_FILE = Path(__file__).resolve().parents[1] / "src" / "toolrun" / "selection" / "judge.json"


@dataclass(frozen=True)
class Seen:
    """A candidate as step 4 sees it: its signals (with a similarity where meaning was
    weighed) and the log-odds its cost asks beyond the bar; whether it is the answer, and
    whether its arguments (step 5's rules) are the answer's (None: no arguments known)."""

    signals: dict[str, float]
    evidence: float
    right: bool
    arguments_right: bool | None


@dataclass
class Judged:
    """One question's first candidates."""

    group: str
    fits: bool  # a tool in the list fits (else "no suitable tool" is right)
    synthetic: bool  # another question's tools: a negative made for fitting only
    candidates: list[Seen]
    offered: frozenset[str]  # the names of the tools it was offered
    fold_key: str  # what decides its fold (a made negative's is its question's)

    @property
    def fold(self) -> int:
        """Its fold among FOLDS."""
        return zlib.crc32(self.fold_key.encode()) % FOLDS


def gather(folder: Path, encoder: Encoder | None) -> list[Judged]:
    """Every question of every set; and for each question of a BFCL set whose tools fit,
    the same question over another question's tools (none of them its answer): a made
    negative, so that every set teaches what does not fit."""
    judged: list[Judged] = []
    for group, fits in BFCL_SETS.items():
        records = json_lines(folder / f"BFCL_v4_{group}.json")
        answers: dict[str, dict[str, Any]] = {}
        if fits:
            for record in json_lines(folder / "possible_answer" / f"BFCL_v4_{group}.json"):
                answers[record["id"]] = {k: v for g in record["ground_truth"] for k, v in g.items()}
        for place, record in enumerate(records):
            task = question_text(record)
            answer = answers.get(record["id"], {})
            offered = frozenset(str(f["name"]) for f in record["function"])
            key = min(offered)
            selector = Selector([ToolCard.parse(f) for f in record["function"]], encoder)
            seen = first(selector, task, answer)
            judged.append(Judged(group, fits, False, seen, offered, key))
            if fits:
                other = records[(place + len(records) // 2) % len(records)]
                tools = [f for f in other["function"] if f["name"] not in answer]
                if tools:
                    selector = Selector([ToolCard.parse(f) for f in tools], encoder)
                    made = first(selector, task, {})
                    names = frozenset(str(f["name"]) for f in tools)
                    judged.append(Judged(group, False, True, made, names, key))
    cards = [ToolCard.of(tool.descriptor) for tool in ToolRegistry.with_builtins().list()]
    registry = Selector(cards, encoder)
    built_in = frozenset(card.name for card in cards)
    for record in json_lines(REGISTRY_TASKS):
        right = record["tool"]
        answer = {} if right is None else {right: None}
        candidates = first(registry, record["task"], answer)
        # Every task is offered the whole registry: one fold's are judged by a fit on
        # none of them (the registry's tools are never new to it).
        key = right if right is not None else record["task"]
        judged.append(Judged(REGISTRY_SET, right is not None, False, candidates, built_in, key))
    return judged


def first(selector: Selector, task: str, answer: dict[str, Any]) -> list[Seen]:
    """The first candidates for `task`; `answer`: the right tool's name, with its accepted
    arguments (or None)."""
    found = []
    for candidate in selector.select(task).candidates[:FIT_DEPTH]:
        accepted = answer.get(candidate.name)
        matches = None
        if accepted is not None:
            card = selector.by_name[candidate.name]
            arguments = selector.completed(card, task, fill(card, task)).arguments
            matches = arguments_match(arguments, accepted)
        found.append(Seen(candidate.signals, candidate.evidence, candidate.name in answer, matches))
    return found


def examples(judged: list[Judged], groups: set[str], by_meaning: bool) -> list[Example]:
    """What a judge is fitted on: each question's first candidate, labelled, where it was
    weighed the judge's way (by meaning or not); a first candidate that is not the answer
    where one fits is the ranking's miss, left out."""
    found = []
    for question in judged:
        if question.group not in groups or not question.candidates:
            continue
        seen = question.candidates[0]
        if (question.fits and not seen.right) or ("similarity" in seen.signals) != by_meaning:
            continue
        found.append(Example(seen.signals, question.fits, question.group))
    return found


@dataclass(frozen=True)
class Judges:
    """Step 4's pair: a candidate weighed by meaning is judged by `meaning`."""

    words: Judge
    meaning: Judge | None = None

    def fits(self, seen: Seen, shift: float = 0.0) -> bool:
        """As step 4 decides, its bar moved by `shift` (log-odds: a `min_confidence`)."""
        judge = self.meaning if "similarity" in seen.signals and self.meaning else self.words
        return judge.logit(seen.signals) >= seen.evidence + shift


def scored(
    judges: Judges, judged: list[Judged], group: str, shift: float = 0.0
) -> tuple[float, float | None]:
    """The set's real questions decided as step 4 does (the first candidate if it fits,
    else the first of the next ones weighed by meaning that fits): the share answered
    right — the tool, or "no suitable tool" where none fits — and the share with the
    right arguments too (None: the set has no arguments). `shift`: the bar moved."""
    right = total = 0
    arguments: int | None = None
    for question in judged:
        if question.group != group or question.synthetic:
            continue
        total += 1
        eligible = [
            seen
            for place, seen in enumerate(question.candidates)
            if place == 0 or "similarity" in seen.signals
        ]
        chosen = next((seen for seen in eligible if judges.fits(seen, shift)), None)
        if not question.fits:
            right += chosen is None
        elif chosen is not None and chosen.right:
            right += 1
            if chosen.arguments_right is not None:
                arguments = (arguments or 0) + chosen.arguments_right
    return right / total, None if arguments is None else arguments / total


CALIBRATE_COLUMNS = (
    "judge",
    "set",
    "n",
    "measure",
    "left out",
    "unseen tools",
    "fitted",
    "arguments",
)


def calibrate(folder: Path, encoder: Encoder | None, *, write: Path | None) -> None:
    """Each set left out in turn, each fold of questions, then all, for words and (with
    the model) meaning."""
    groups = [*BFCL_SETS, REGISTRY_SET]
    by_words = gather(folder, None)
    by_meaning = gather(folder, encoder) if encoder is not None else None

    def fitted(
        without: str | None = None, unseen: Callable[[Judged], bool] | None = None
    ) -> tuple[Judges, Judges | None]:
        """The judges fitted on every set but `without`, on the questions not `unseen`."""
        kept = set(groups) - {without}

        def fitting(judged: list[Judged]) -> list[Judged]:
            return [q for q in judged if unseen is None or not unseen(q)]

        words = Judges(fit_judge(examples(fitting(by_words), kept, False), BY_WORDS))
        if by_meaning is None:
            return words, None
        meaning = fit_judge(examples(fitting(by_meaning), kept, True), BY_MEANING)
        return words, Judges(words.words, meaning)

    unseen = unseen_tools(fitted, by_words, by_meaning, groups)
    table = Table(
        title="step 4's judge: each set left out (fitted on the others), its questions "
        f"of tools not fitted on ({FOLDS} folds), then fitted on all"
    )
    for column in CALIBRATE_COLUMNS:
        left = column in ("judge", "set", "measure")
        table.add_column(column, justify="left" if left else "right")
    whole = fitted(None)
    measured: dict[str, dict[str, Any]] = {}
    for group in groups:
        held = fitted(group)
        kind = {True: "top-1", False: "no suitable tool"}.get(BFCL_SETS.get(group), "right")
        n = sum(q.group == group and not q.synthetic for q in by_words)
        for place, (name, judged) in enumerate((("words", by_words), ("meaning", by_meaning))):
            judges, left_out = whole[place], held[place]
            if judged is None or judges is None or left_out is None:
                continue
            out, _ = scored(left_out, judged, group)
            all_in, arguments = scored(judges, judged, group)
            new = unseen[place][group]
            figures: dict[str, Any] = {"n": n, kind: {"left_out": round(out, 4)}}
            figures[kind]["unseen_tools"] = round(new, 4)
            figures[kind]["fitted"] = round(all_in, 4)
            if arguments is not None:
                figures["arguments"] = round(arguments, 4)
            measured.setdefault(name, {})[group] = figures
            shown = "-" if arguments is None else f"{arguments:.3f}"
            table.add_row(
                name, group, str(n), kind, f"{out:.3f}", f"{new:.3f}", f"{all_in:.3f}", shown
            )
    Console(stderr=True, width=WIDE).print(table)  # every column whole, in a log too
    measured["bars"] = bars(whole[1] or whole[0], by_meaning or by_words, groups)
    if write is not None:
        meaning = whole[1]
        if meaning is None or meaning.meaning is None:
            raise SystemExit("--write needs both judges: install the embedding model")
        stored = {
            "fitted_on": groups,
            "measured": measured,
            "judges": {"words": whole[0].words.as_dict(), "meaning": meaning.meaning.as_dict()},
        }
        partial = write.with_name(write.name + ".partial")
        partial.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
        partial.replace(write)
        sys.stderr.write(f"wrote {write}\n")
    sys.stdout.write(f"{json.dumps(measured)}\n")


def unseen_tools(
    fitted: Callable[..., tuple[Judges, Judges | None]],
    by_words: list[Judged],
    by_meaning: list[Judged] | None,
    groups: list[str],
) -> tuple[dict[str, float], dict[str, float]]:
    """Each set's share right over its questions (by words, by meaning), each fold's
    judged by the judges fitted on the questions of the other folds that were offered
    none of its tools: what to expect on new questions of a kind seen, offering tools
    not seen. (The lists hold the same questions in the same order.)"""
    right: list[dict[str, float]] = [dict.fromkeys(groups, 0.0), dict.fromkeys(groups, 0.0)]
    total = dict.fromkeys(groups, 0)
    for fold in range(FOLDS):
        held = [q for q in by_words if q.fold == fold]
        tools = frozenset().union(*(q.offered for q in held if not q.synthetic))

        def unseen(question: Judged, fold: int = fold, tools: frozenset[str] = tools) -> bool:
            return question.fold == fold or bool(question.offered & tools)

        judges = fitted(unseen=unseen)
        for group in groups:
            n = sum(q.group == group and not q.synthetic for q in held)
            total[group] += n
            for place, judged in enumerate((by_words, by_meaning)):
                each = judges[place]
                if n and judged is not None and each is not None:
                    in_fold = [q for q in judged if q.fold == fold]
                    right[place][group] += scored(each, in_fold, group)[0] * n
    words, meaning = (
        {group: shares[group] / total[group] for group in groups if total[group]}
        for shares in right
    )
    return words, meaning


# `min_confidence` settings shown against each set: the trade the judge offers.
BARS = (0.12, 0.27, 0.5, 0.73, 0.82, 0.88)


def bars(judges: Judges, judged: list[Judged], groups: list[str]) -> dict[str, dict[str, float]]:
    """Each set scored by the judges fitted on all, their bar moved to each of BARS (as
    `min_confidence` moves it for a tool whose bar is 0.5): one table, returned too."""
    table = Table(title="the judge fitted on all, its bar moved (min_confidence)")
    table.add_column("bar", justify="right")
    for group in groups:
        table.add_column(group, justify="right")
    found: dict[str, dict[str, float]] = {}
    for bar in BARS:
        shift = math.log(bar / (1 - bar))
        row = {group: round(scored(judges, judged, group, shift)[0], 4) for group in groups}
        found[str(bar)] = row
        table.add_row(f"{bar:.2f}", *(f"{row[group]:.3f}" for group in groups))
    Console(stderr=True).print(table)
    return found


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
    parser.add_argument("kind", choices=["bfcl", "seal", "calibrate"])
    parser.add_argument("files", nargs="+", type=Path)
    options = parser.parse_args()
    wanted = {"bfcl": (1, 2), "seal": (2,), "calibrate": (1,)}[options.kind]
    if len(options.files) not in wanted:
        parser.error("bfcl QUESTIONS [ANSWERS], seal TOOLS QUERIES or calibrate BFCL_DIR")
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

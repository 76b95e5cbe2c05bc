"""Step 4's judge fitted and checked on the development sets (`bench/selection.py
calibrate`): each set left out, each set's questions of tools the judge was not fitted
on, then fitted on all; the `min_confidence` trade; and how well the judge tells a tool
that fits from a near miss on tools it was not fitted on (`separation`)."""

from __future__ import annotations

import json
import math
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from bench.bfcl_data import arguments_match, json_lines, question_text
from bench.registry_tasks import (
    REGISTRY_TASKS,
    builtin_selector,
    request_sources,
    selector_without,
)
from toolrun.selection.arguments import fill
from toolrun.selection.calibration import Example, fit_judge, fit_network
from toolrun.selection.cards import ToolCard
from toolrun.selection.chat import CHAT_ONLY
from toolrun.selection.judge import BY_MEANING, BY_WORDS, Judge
from toolrun.selection.pipeline import FIT_DEPTH, Selector
from toolrun.selection.unserved import UNSERVED

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

# Step 4's judge, fitted and checked on the development sets (issue 27): BFCL's four
# (whether a tool in each question's list fits), and toolrun's own registry with tasks
# written for it (bench/data/toolrun_tasks.jsonl: the right built-in tool, or none).
BFCL_SETS = {"multiple": True, "live_simple": True, "simple_python": True, "irrelevance": False}
REGISTRY_SET = "toolrun"
# The registry's request files, measured, never fitted on: each task judged by a selector
# whose requests leave its own file out (`registry_tasks.selector_without`), as a task
# never seen. (Fitted on too, they cost BFCL's live_simple 0.02-0.05 of top-1 for 0.02-0.04
# more "no suitable tool" here: docs/selection.md, "Measured".)
REQUESTS_SET = "requests"
WIDE = 110  # columns for the calibration table
FOLDS = 5  # of every set's questions (`Judged.fold`)
LOWEST_BAR = 1e-9  # a `min_confidence` at which any candidate is chosen
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
    source: str = ""  # the registry task file it comes from
    turned_down: bool = False  # its choice turned down (`Selector._turned_down`)

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
            seen, _ = first(selector, task, answer)
            judged.append(Judged(group, fits, False, seen, offered, key))
            if fits:
                other = records[(place + len(records) // 2) % len(records)]
                tools = [f for f in other["function"] if f["name"] not in answer]
                if tools:
                    selector = Selector([ToolCard.parse(f) for f in tools], encoder)
                    made, _ = first(selector, task, {})
                    names = frozenset(str(f["name"]) for f in tools)
                    judged.append(Judged(group, False, True, made, names, key))
    judged += registry_judged(REGISTRY_SET, REGISTRY_TASKS, builtin_selector(encoder))
    for path in request_sources():
        judged += registry_judged(REQUESTS_SET, path, selector_without(path, encoder))
    return judged


def registry_judged(group: str, tasks: Path, registry: Selector) -> list[Judged]:
    """The registry tasks of `tasks` (the right built-in tool, or none) over `registry`.
    Every task is offered the whole registry: one fold's are judged by a fit on none of
    them (the registry's tools are never new to it)."""
    built_in = frozenset(registry.by_name)
    judged = []
    for record in json_lines(tasks):
        right = record["tool"]
        answer = {} if right is None else {right: None}
        candidates, turned_down = first(registry, record["task"], answer)
        key = right if right is not None else record["task"]
        fits = right is not None
        judged.append(
            Judged(group, fits, False, candidates, built_in, key, tasks.name, turned_down)
        )
    return judged


def first(selector: Selector, task: str, answer: dict[str, Any]) -> tuple[list[Seen], bool]:
    """The first candidates for `task`, and whether a choice of them is turned down as
    asking for an answer in the chat or like a request no built-in tool serves (whatever
    the judge: the first is chosen at the lowest bar, and checked — so a later candidate
    exempt from it, a formed one, counts as turned down too); `answer`: the right tool's
    name, with its accepted arguments (or None)."""
    found = []
    selection = selector.select(task, min_confidence=LOWEST_BAR)
    for candidate in selection.candidates[:FIT_DEPTH]:
        accepted = answer.get(candidate.name)
        matches = None
        if accepted is not None:
            card = selector.by_name[candidate.name]
            arguments = selector.completed(card, task, fill(card, task)).arguments
            matches = arguments_match(arguments, accepted)
        found.append(Seen(candidate.signals, candidate.evidence, candidate.name in answer, matches))
    return found, selection.reason.startswith((UNSERVED, CHAT_ONLY))


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

    def margin(self, seen: Seen) -> float:
        """How far the candidate clears its bar, in log-odds, as step 4 judges it (it fits
        where this is at least 0, or the `min_confidence` shift)."""
        judge = self.meaning if "similarity" in seen.signals and self.meaning else self.words
        return judge.logit(seen.signals) - seen.evidence


@dataclass(frozen=True)
class Decided:
    """A question as step 4 decides it: the candidates it may choose (the first, and the
    next ones weighed by meaning), each with its margin over its bar."""

    group: str
    fits: bool  # a tool in its list fits
    candidates: tuple[tuple[float, Seen], ...]
    turned_down: bool = False  # as asking for the chat, or like a request none serves

    def chosen(self, shift: float = 0.0) -> Seen | None:
        """The first candidate that clears its bar moved by `shift`, if any (none where
        the choice was turned down)."""
        if self.turned_down:
            return None
        return next((seen for margin, seen in self.candidates if margin >= shift), None)

    def right(self, shift: float = 0.0) -> bool:
        """The answer chosen, or none where no tool fits."""
        chosen = self.chosen(shift)
        return chosen is None if not self.fits else chosen is not None and chosen.right


def decided(judges: Judges, question: Judged) -> Decided:
    eligible = [
        seen
        for place, seen in enumerate(question.candidates)
        if place == 0 or "similarity" in seen.signals
    ]
    candidates = tuple((judges.margin(seen), seen) for seen in eligible)
    return Decided(question.group, question.fits, candidates, question.turned_down)


def scored(
    judges: Judges, judged: list[Judged], group: str, shift: float = 0.0
) -> tuple[float, float | None]:
    """The set's real questions decided as step 4 does (the first candidate if it fits,
    else the first of the next ones weighed by meaning that fits): the share answered
    right — the tool, or "no suitable tool" where none fits — and the share with the
    right arguments too (None: the set has no arguments). `shift`: the bar moved."""
    decisions = [
        decided(judges, question)
        for question in judged
        if question.group == group and not question.synthetic
    ]
    arguments = [
        chosen.arguments_right
        for decision in decisions
        if decision.right(shift)
        and (chosen := decision.chosen(shift)) is not None
        and chosen.arguments_right is not None
    ]
    shown = sum(arguments) / len(decisions) if arguments else None
    return share(decisions, (group,), shift), shown


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
        meaning = fit_network(examples(fitting(by_meaning), kept, True), BY_MEANING)
        return words, Judges(words.words, meaning)

    folds = unseen_folds(fitted, by_words, by_meaning)
    unseen = unseen_tools(folds, groups)
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
    measured["separation"] = separation(folds)
    shown_separation(measured["separation"])
    measured["requests_left_out"] = requests_left_out(whole[1] or whole[0], by_meaning or by_words)
    shown_left_out(measured["requests_left_out"])
    if write is not None:
        stored_judges(write, whole, groups, measured)
    sys.stdout.write(f"{json.dumps(measured)}\n")


def stored_judges(
    write: Path, whole: tuple[Judges, Judges | None], groups: list[str], measured: dict[str, Any]
) -> None:
    """The judges fitted on all (`whole`) stored in `write` with what was measured, never
    half-written."""
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


@dataclass(frozen=True)
class Fold:
    """One fold's questions (by words, by meaning) and the judges fitted on the questions
    of the other folds that were offered none of its tools."""

    judges: tuple[Judges, Judges | None]
    questions: tuple[list[Judged], list[Judged] | None]


def unseen_folds(
    fitted: Callable[..., tuple[Judges, Judges | None]],
    by_words: list[Judged],
    by_meaning: list[Judged] | None,
) -> list[Fold]:
    """Every fold with the judges that have seen none of its tools: what to expect on new
    questions of a kind seen, offering tools not seen. (The lists hold the same questions
    in the same order.)"""
    folds = []
    for fold in range(FOLDS):
        held = [q for q in by_words if q.fold == fold]
        tools = frozenset().union(*(q.offered for q in held if not q.synthetic))

        def unseen(question: Judged, fold: int = fold, tools: frozenset[str] = tools) -> bool:
            return question.fold == fold or bool(question.offered & tools)

        in_fold = None if by_meaning is None else [q for q in by_meaning if q.fold == fold]
        folds.append(Fold(fitted(unseen=unseen), (held, in_fold)))
    return folds


def fold_decisions(folds: list[Fold], place: int) -> list[Decided]:
    """Every fold's real questions decided by its judges (`place` 0: by words, 1: by
    meaning; none where there is no such judge)."""
    return [
        decided(judges, question)
        for fold in folds
        if (judges := fold.judges[place]) is not None
        and (questions := fold.questions[place]) is not None
        for question in questions
        if not question.synthetic
    ]


def unseen_tools(folds: list[Fold], groups: list[str]) -> tuple[dict[str, float], ...]:
    """Each set's share right over its questions (by words, by meaning), each fold's
    judged by the judges that have seen none of its tools."""
    found = []
    for place in (0, 1):
        decisions = fold_decisions(folds, place)
        present = {question.group for question in decisions}
        found.append({group: share(decisions, (group,)) for group in groups if group in present})
    return tuple(found)


# The goals (27), on tools the judge was not fitted on: the right tool for 0.90
# of the questions where one fits, "no suitable tool" for 0.85 of those where none does.
GOAL_RIGHT = 0.90
GOAL_REFUSED = 0.85
NO_TOOL_SETS = tuple(group for group, fits in BFCL_SETS.items() if not fits)
SEPARATION_KEYS = ("auc", "right_at_goal_refused", "refused_at_goal_right")
SHIFTS = tuple(step / 20 for step in range(-160, 161))  # bars tried, in log-odds (±8)


def separation(folds: list[Fold]) -> dict[str, dict[str, dict[str, float | None]]]:
    """How well each judge, on questions of tools it was not fitted on, tells a tool that
    fits from a near miss, for each set where one fits: the area under the curve (AUC)
    of its questions' first candidates that are the answer against the first candidates
    of BFCL's sets where none fits (NO_TOOL_SETS: `irrelevance`; the chance that a fit's
    margin is the higher); its share
    right at the lowest bar that refuses GOAL_REFUSED of those; and the share of those
    refused at the highest bar that gets GOAL_RIGHT of it right (None: no bar does)."""
    found: dict[str, dict[str, dict[str, float | None]]] = {}
    for place, name in enumerate(("words", "meaning")):
        decisions = fold_decisions(folds, place)
        if not decisions:
            continue
        refused = {shift: share(decisions, NO_TOOL_SETS, shift) for shift in SHIFTS}
        near = [
            q.candidates[0][0] if q.candidates else -math.inf
            for q in decisions
            if q.group in NO_TOOL_SETS
        ]
        strict = next((shift for shift in SHIFTS if refused[shift] >= GOAL_REFUSED), None)
        for group, fits in BFCL_SETS.items():
            if not fits:
                continue
            right = {shift: share(decisions, (group,), shift) for shift in SHIFTS}
            loose = max((shift for shift in SHIFTS if right[shift] >= GOAL_RIGHT), default=None)
            fitting = [
                q.candidates[0][0]
                for q in decisions
                if q.group == group and q.candidates and q.candidates[0][1].right
            ]
            found.setdefault(name, {})[group] = {
                "auc": round(area_under_curve(fitting, near), 4),
                "right_at_goal_refused": None if strict is None else round(right[strict], 4),
                "refused_at_goal_right": None if loose is None else round(refused[loose], 4),
            }
    return found


def share(decided: Sequence[Decided], groups: Sequence[str], shift: float = 0.0) -> float:
    """The share of these sets' questions answered right with the bar moved by `shift`."""
    chosen = [q for q in decided if q.group in groups]
    return sum(q.right(shift) for q in chosen) / len(chosen) if chosen else 0.0


def area_under_curve(higher: Sequence[float], lower: Sequence[float]) -> float:
    """The chance that a value of `higher` exceeds one of `lower` (ties count half)."""
    if not higher or not lower:
        return math.nan
    wins = 0.0  # pairs where the `higher` value is above
    below = 0  # `lower` values under the current one
    ranked = sorted([(value, 1) for value in higher] + [(value, 0) for value in lower])
    for _, tied in groupby(ranked, key=lambda pair: pair[0]):
        kinds = [kind for _, kind in tied]
        ups = sum(kinds)
        wins += ups * (below + (len(kinds) - ups) / 2)
        below += len(kinds) - ups
    return wins / (len(higher) * len(lower))


def requests_left_out(
    judges: Judges, judged: list[Judged]
) -> dict[str, dict[str, float | int | None]]:
    """The registry's leave-one-file-out: each request file's tasks (their candidates
    weighed with its requests left out; no judge is fitted on them) decided by `judges`,
    as tasks never seen are; then all the files' together."""
    found: dict[str, dict[str, float | int | None]] = {}
    every: list[Decided] = []
    for path in request_sources():
        own = [q for q in judged if q.group == REQUESTS_SET and q.source == path.name]
        decisions = [decided(judges, question) for question in own]
        found[path.name] = registry_figures(decisions)
        every += decisions
    found["all"] = registry_figures(every)
    return found


def registry_figures(decisions: Sequence[Decided]) -> dict[str, float | int | None]:
    """Registry tasks' figures: how many, top-1 where a tool fits, "no suitable tool"
    where none does (None: no such task)."""

    def right(fitting: bool) -> float | None:
        chosen = [d for d in decisions if d.fits is fitting]
        return round(sum(d.right() for d in chosen) / len(chosen), 4) if chosen else None

    return {"n": len(decisions), "top-1": right(True), "no suitable tool": right(False)}


def shown_left_out(found: dict[str, dict[str, float | int | None]]) -> None:
    table = Table(
        title="the registry's request files, each left out of the requests (no judge is "
        "fitted on them)"
    )
    for column in ("file", "n", "top-1", "no suitable tool"):
        table.add_column(column, justify="left" if column == "file" else "right")
    for name, figures in found.items():
        cells = [figures[key] for key in ("top-1", "no suitable tool")]
        shown = ("-" if c is None else f"{c:.3f}" for c in cells)
        table.add_row(name, str(figures["n"]), *shown)
    Console(stderr=True, width=WIDE).print(table)


def shown_separation(found: dict[str, dict[str, dict[str, float | None]]]) -> None:
    table = Table(
        title="the judge on tools it was not fitted on: a fit told from a near miss "
        f"(goals: {GOAL_RIGHT:.2f} right, {GOAL_REFUSED:.2f} refused)"
    )
    for column in (
        "judge",
        "set",
        "AUC",
        f"right, {GOAL_REFUSED:.2f} refused",
        f"refused, {GOAL_RIGHT:.2f} right",
    ):
        table.add_column(column, justify="left" if column in ("judge", "set") else "right")
    for name, sets in found.items():
        for group, figures in sets.items():
            cells = (figures[key] for key in SEPARATION_KEYS)
            table.add_row(name, group, *("-" if c is None else f"{c:.3f}" for c in cells))
    Console(stderr=True, width=WIDE).print(table)


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

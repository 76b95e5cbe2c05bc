"""The five steps of selection over a set of candidate tools:

1. scenario — what kind of work the task is (`steps.scenarios`);
2. intents — what it wants done (`steps.intents`, or a model: `model_steps`);
3. matching — candidates ranked by BM25 over their fields (`lexical`), each part of a
   task that asks for several things ranked too, so every part's tool is among them;
4. evaluation — the shortlist ordered by score * (1 + relevance), history and lists
   applied; "no suitable tool" when the best is too little relevant;
5. arguments — values for the chosen tool (`arguments.fill`, or a model), validated.

`Selector.select` returns the ranking, the choice, its arguments and the trace of each
step.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.selection.arguments import Filled, checked, fill, without_values
from toolrun.selection.cards import ToolCard
from toolrun.selection.lexical import LexicalIndex
from toolrun.selection.model_steps import ModelSteps
from toolrun.selection.steps import clauses, intent_stems, intents, scenario_tags, scenarios
from toolrun.selection.text import terms

# The relevance (`LexicalIndex.relevance`, 0 to 2.5) the chosen tool needs; tuned on the
# BFCL development data (multiple vs irrelevance).
MIN_RELEVANCE = 0.69
SCENARIO_BOOST = 0.15  # score a candidate gains for serving the task's scenario
INTENT_BOOST = 0.10  # … and for its name or tags saying the task's intent
SHORTLIST = 20  # candidates whose relevance is weighed before the final order
RELEVANCE_WEIGHT = 1.0
AGREEMENT = 0.2  # relevance a candidate gains for each of those two
AGREEING_STEPS = frozenset({"scenario", "intent"})


@dataclass(frozen=True)
class Record:
    """What history says of a tool (step 4): success rate, typical latency, feedback."""

    success_rate: float
    p50_ms: float | None = None
    rating: float | None = None  # mean user feedback, 1 to 5


@dataclass
class Candidate:
    name: str
    score: float
    relevance: float  # see LexicalIndex.relevance
    why: list[str] = field(default_factory=list)


@dataclass
class Selection:
    """The answer of one selection."""

    task: str
    candidates: list[Candidate]
    chosen: str | None
    reason: str
    arguments: dict[str, Any] | None
    missing: list[str]
    errors: list[str]
    trace: dict[str, Any]
    elapsed_ms: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Selector:
    """Selects among a fixed set of tools (index built once)."""

    def __init__(self, cards: Sequence[ToolCard]) -> None:
        self.cards = list(cards)
        self.index = LexicalIndex(self.cards)
        self.by_name = {card.name: card for card in self.cards}

    def select(
        self,
        task: str,
        *,
        context: dict[str, Any] | None = None,
        top_k: int = 5,
        history: Mapping[str, Record] | None = None,
        whitelist: Collection[str] = (),
        excluded: Collection[str] = (),
        model: ModelSteps | None = None,
    ) -> Selection:
        """Select for `task`: `context` holds argument values by name; `history` what
        history says of tools; whitelisted tools that match go first; `excluded` ones
        (blacklisted) are never candidates; `model` does steps 2 and 5 (rules if it
        fails)."""
        started = time.perf_counter()
        context = context or {}
        found_scenarios = scenarios(task)
        found_intents, intents_by = _intents(task, model)
        ranked = self.rank(task, found_scenarios, found_intents, history or {}, top_k, excluded)
        top = _whitelisted_first(ranked, whitelist)
        chosen, reason = self.evaluate(top)
        filled: Filled | None = None
        arguments_by = None
        if chosen is not None:
            filled, arguments_by = _arguments(self.by_name[chosen], task, context, model)
        trace = {
            "1_scenario": found_scenarios,
            "2_intents": found_intents,
            "2_intents_by": intents_by,
            "5_arguments_by": arguments_by,
            "3_matching": [{"name": c.name, "score": round(c.score, 4)} for c in top],
            "4_evaluation": reason,
            "5_arguments": None if filled is None else filled.sources,
        }
        return Selection(
            task=task,
            candidates=top,
            chosen=chosen,
            reason=reason,
            arguments=None if filled is None else filled.arguments,
            missing=[] if filled is None else filled.missing,
            errors=[] if filled is None else filled.errors,
            trace=trace,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
        )

    def rank(
        self,
        task: str,
        found_scenarios: list[str],
        found_intents: list[str],
        history: Mapping[str, Record],
        top_k: int,
        excluded: Collection[str] = (),
    ) -> list[Candidate]:
        """Step 3 (and the history part of step 4): the best `top_k` candidates."""
        wording = without_values(task)
        query = terms(wording)
        scores = self.index.scores(query)
        parts = clauses(wording)
        if len(parts) > 1:  # each part's best two come forward too
            top_score = max(scores.values(), default=0.0)
            for part in parts:
                part_scores = self.index.scores(terms(part))
                best = sorted(part_scores.items(), key=lambda kv: -kv[1])[:2]
                for place, (index, _score) in enumerate(best):
                    scores[index] = max(scores.get(index, 0.0), top_score * (1.01 - 0.1 * place))
        tags = {tag for scenario in found_scenarios[:1] for tag in scenario_tags(scenario)}
        verbs = {s for intent in found_intents for s in intent_stems(intent)}
        boosted: list[tuple[float, int, list[str]]] = []
        for index, score in scores.items():
            card = self.cards[index]
            if card.name in excluded:
                continue
            why = []
            boost = 1.0
            if tags and (card.category in tags or tags & set(card.tags)):
                boost += SCENARIO_BOOST
                why.append("scenario")
            if verbs & (self.index.name_words[index] | self.index.tag_words[index]):
                boost += INTENT_BOOST
                why.append("intent")
            record = history.get(card.name)
            if record is not None:
                boost *= 0.5 + record.success_rate / 2
                why.append(f"history {record.success_rate:.0%} success")
                if record.rating is not None:
                    boost *= 1 + 0.1 * (record.rating - 3)
                    why.append(f"rated {record.rating:.1f}/5")
            boosted.append((score * boost, index, why))
        boosted.sort(key=lambda item: -item[0])
        words = {t for t in query if not t.isdigit()}
        shortlist = [
            Candidate(
                self.cards[i].name,
                score,
                self.index.relevance(i, words) + AGREEMENT * len(AGREEING_STEPS & set(why)),
                why,
            )
            for score, i, why in boosted[: max(top_k, SHORTLIST)]
        ]
        # The final order weighs how well each covers the task too.
        shortlist.sort(key=lambda c: -c.score * (RELEVANCE_WEIGHT + c.relevance))
        return shortlist[:top_k]

    def evaluate(self, top: list[Candidate]) -> tuple[str | None, str]:
        """Step 4: the best candidate, or None with why nothing fits."""
        if not top:
            return None, "no suitable tool: no tool shares a word with the task"
        best = top[0]
        if best.relevance < MIN_RELEVANCE:
            return None, (
                f"no suitable tool: the best match, {best.name}, has relevance "
                f"{best.relevance:.2f} (at least {MIN_RELEVANCE} needed)"
            )
        return best.name, f"{best.name}: best match (relevance {best.relevance:.2f})"


def _intents(task: str, model: ModelSteps | None) -> tuple[list[str], str]:
    """Step 2 by the model where there is one, else (or when it fails) by the rules."""
    if model is None:
        return intents(task), "rules"
    try:
        return model.intents(task), "model"
    except ToolExecutionError as exc:
        return intents(task), f"rules (the model failed: {exc})"


def _arguments(
    card: ToolCard, task: str, context: dict[str, Any], model: ModelSteps | None
) -> tuple[Filled, str]:
    """Step 5 by the model where there is one, else (or when it fails) by the rules."""
    if model is None:
        return fill(card, task, context), "rules"
    try:
        return checked(card, model.arguments(card, task, context), context, "model"), "model"
    except ToolExecutionError as exc:
        return fill(card, task, context), f"rules (the model failed: {exc})"


def _whitelisted_first(ranked: list[Candidate], whitelist: Collection[str]) -> list[Candidate]:
    """Whitelisted candidates that match the task well enough go first (stable order)."""
    for candidate in ranked:
        if candidate.name in whitelist and candidate.relevance >= MIN_RELEVANCE:
            candidate.why.append("whitelisted")
    return sorted(ranked, key=lambda c: "whitelisted" not in c.why)

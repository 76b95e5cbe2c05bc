"""The five steps of selection over a set of candidate tools:

1. scenario — what kind of work the task is (`steps.scenarios`);
2. intents — what it wants done (`steps.intents`, or a model: `model_steps`);
3. matching — candidates ranked by BM25 over their fields (`lexical`), the task read
   without what it says of when or why (`asides`: "… before I commit", "so I can fix
   them"; steps 1 and 2 and step 4's words of the task read it so too), each part of
   a task that asks for several things ranked too, so every part's tool is among them;
   with an embedding model (`semantic`, `nearness`), over a short list or where words
   leave doubt, the candidates' similarity in meaning to the task is weighed too, and in
   a list of at most MEANING_LIST the built-in tools nearest the task in meaning are
   candidates whether they share a word with it or not;
4. evaluation — the shortlist ordered by score * (1 + relevance) (plus the similarity
   in meaning, with a model), history (success, rating, latency), cost or permission level, whether
   the required parameters can be filled (`evaluation`) and the lists applied; each
   candidate's confidence that it fits judged (`judge`), "no suitable tool" when the
   best is not confident enough, or when it is a built-in tool and the task asks for an
   answer in the chat (`chat`; with a model or without) or, weighed by meaning, is like
   a request no built-in tool serves (`unserved`);
5. arguments — values for the chosen tool (`arguments.fill`, or a model), validated;
   with an embedding model, a required text parameter the rules leave open takes the
   task's phrase most like it in meaning (`guesses`).

`Selector.select` returns the ranking, the choice, its arguments and the trace of each
step.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from toolrun.errors import ToolExecutionError
from toolrun.selection.arguments import Filled, checked, fill
from toolrun.selection.asides import without_asides
from toolrun.selection.asked import WRITTEN, takes_written
from toolrun.selection.cards import ToolCard
from toolrun.selection.chat import CHAT_ONLY, asks_in_chat
from toolrun.selection.evaluation import (
    history_reasons,
    weigh_cost,
    weigh_latency,
    weigh_missing,
    with_history,
)
from toolrun.selection.facts import Facts, without_values
from toolrun.selection.guesses import guessed
from toolrun.selection.judge import (
    DEFAULT_CONFIDENCE,
    Judge,
    log_odds,
    probability,
    shipped,
    signals,
)
from toolrun.selection.lexical import LexicalIndex
from toolrun.selection.model_steps import ModelSteps
from toolrun.selection.nearness import Embedded, Nearness
from toolrun.selection.quotes import quotes_prose
from toolrun.selection.sought import lacked, sought
from toolrun.selection.steps import clauses, intent_stems, intents, scenario_tags, scenarios
from toolrun.selection.text import terms
from toolrun.selection.unserved import Unserved, unserved

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

# The relevance by words (`LexicalIndex.relevance`, 0 to 2.5) at which a whitelisted tool
# matches a task.
MIN_RELEVANCE = 0.69
SIMILARITY_RANK = 3.0  # weight of similarity against the normalised lexical score
# Relevance at which words alone decide; below it (and with a model) meaning is weighed
# too — embedding the task costs about 10-17 ms, so it is done where it pays.
SURE_RELEVANCE = 1.2
# A list of at most this many tools is always weighed by meaning too, every tool in it a
# candidate (embedding a handful of short texts costs a few ms, and words alone misjudge
# near misses); a larger one (a registry) only where words leave doubt.
SMALL_LIST = 16
# A list of at most this many tools (the registry, or a supplied one) is weighed by
# meaning for every task, over the candidates its words find: the task's embedding (10-17
# ms) is what it costs once the tools' texts are embedded, and words alone rank a tool
# whose description says a word of the task in another sense (git_branches, "its last
# commit", for "list the last 10 commits") over the one it means. A larger one is
# weighed so only where words leave doubt (`SURE_RELEVANCE`).
MEANING_LIST = 200
# In a list of more than SMALL_LIST tools, the tools with requests made of them (built in)
# nearest a task in meaning are candidates too, sharing a word with it or not ("shwo me
# the README.md" asks for `read`).
MEANT = 3
FIT_DEPTH = 3  # with meaning weighed, the first of this many candidates that fits is chosen
JUDGED = 5  # candidates whose confidence is judged (FIT_DEPTH of them may be chosen)
SCENARIO_BOOST = 0.15  # score a candidate gains for serving the task's scenario
INTENT_BOOST = 0.10  # … and for its name or tags saying the task's intent
SHORTLIST = 20  # candidates whose relevance is weighed before the final order
RELEVANCE_WEIGHT = 1.0
AGREEMENT = 0.2  # relevance a candidate gains for each of those two
AGREEING_STEPS = frozenset({"scenario", "intent"})
CHECK_DEPTH = 5  # candidates whose required parameters are tried before the final order


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
    similarity: float | None = None  # in meaning, with an embedding model
    factors: dict[str, float] = field(default_factory=dict)  # step 4's, see `evaluation`
    evidence: float = 0.0  # log-odds needed beyond the usual bar (a costly tool's)
    signals: dict[str, float] = field(default_factory=dict)  # what the judge weighs
    confidence: float | None = None  # the judge's probability that it fits the task
    needed: float = DEFAULT_CONFIDENCE  # the confidence it needs to be chosen

    @property
    def fits(self) -> bool:
        return self.confidence is not None and self.confidence >= self.needed

    @property
    def weight(self) -> float:
        """The product of step 4's factors."""
        return math.prod(self.factors.values())


@dataclass(frozen=True)
class Asked:
    """What a selection is asked: the task, argument values, history and the lists."""

    task: str
    context: dict[str, Any]
    history: Mapping[str, Record]
    whitelist: Collection[str]
    excluded: Collection[str]
    ask: str  # the task without its asides (`asides`): what its words ask for


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
    guessed: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """A tool was chosen and its arguments are complete (none a guess) and valid."""
        return self.chosen is not None and not self.missing and not self.errors and not self.guessed

    def as_dict(self) -> dict[str, Any]:
        """The answer as `POST /v1/select` gives it (no history)."""
        return {**asdict(self), "valid": self.valid}


class Selector:
    """Selects among a fixed set of tools (indexes built once); with an `encoder`, by
    meaning as well as by words."""

    def __init__(
        self,
        cards: Sequence[ToolCard],
        encoder: Encoder | None = None,
        judges: Mapping[str, Judge] | None = None,
        unserved_requests: Sequence[str] | None = None,
    ) -> None:
        """`judges`: step 4's, by how a candidate was weighed ("words", "meaning");
        default: the fitted ones toolrun ships (`judge.shipped`). `unserved_requests`: the
        requests no built-in tool serves; default: the shipped ones (`requests`)."""
        self.cards = list(cards)
        self.judges = shipped() if judges is None else judges
        self.unserved_requests = unserved_requests
        self.index = LexicalIndex(self.cards)
        self.by_name = {card.name: card for card in self.cards}
        # An identifier in a task that names a parameter ("dataset_A") is no value.
        self.parameter_names = {name for card in self.cards for name in card.properties}
        self.encoder = encoder
        self.small = len(self.cards) <= SMALL_LIST
        # The tools that take a value a task may write out, by index: a command ("compile
        # main.c with gcc"), a URL ("request https://httpbin.org/get"), what to change
        # into what. Only in a list of at most MEANING_LIST tools (by words alone too): in
        # a larger one, hundreds taking a URL would crowd out the tools words find.
        self.modest = len(self.cards) <= MEANING_LIST  # weighed by meaning for every task
        taken = [takes_written(card) if self.modest else frozenset() for card in self.cards]
        self.takers = {index: kinds for index, kinds in enumerate(taken) if kinds}
        self.embedded = None if encoder is None else Embedded(self.cards, encoder)

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
        min_confidence: float = DEFAULT_CONFIDENCE,
    ) -> Selection:
        """Select for `task`: `context` holds argument values by name; `history` what
        history says of tools; whitelisted tools that match go first; `excluded` ones
        (blacklisted) are never candidates; `model` does steps 2 and 5 (rules if it
        fails); a tool is chosen only with at least `min_confidence` that it fits (0 to 1,
        exclusive; more for a costly tool).

        Raises:
            ValueError: `min_confidence` outside (0, 1).
        """
        bar = log_odds(min_confidence)
        started = time.perf_counter()
        context = context or {}
        ask = without_asides(task)
        found_scenarios = scenarios(ask)
        found_intents, intents_by = _intents(ask, model)
        asked = Asked(task, context, history or {}, whitelist, excluded, ask)
        tried: dict[str, Filled] = {}
        nearness = None if self.embedded is None else Nearness(self.embedded, task)
        always = nearness is not None and self.modest
        top = self.rank(
            asked, found_scenarios, found_intents, top_k, nearness if always else None, tried
        )
        matching_by = "words"
        if always and self.small:
            matching_by = f"words and meaning (a list of at most {SMALL_LIST} tools)"
        elif always:
            matching_by = f"words and meaning (a list of at most {MEANING_LIST} tools)"
        elif nearness is not None and top and not self._sure(top[0], ask):
            top = self.rank(asked, found_scenarios, found_intents, top_k, nearness, tried)
            matching_by = (
                f"words and meaning (by words alone, the best relevance is below {SURE_RELEVANCE})"
            )
        self._judge(top, asked, tried, bar)
        chosen, reason = self.evaluate(top)
        if chosen is not None and (turned_down := self._turned_down(top, chosen, task, nearness)):
            others = [c for c in top if not self.by_name[c.name].requests]  # not built in
            chosen, reason = self.evaluate(others) if others else (None, "")
            if chosen is None:
                reason = turned_down
        filled: Filled | None = None
        arguments_by = None
        if chosen is not None:
            card = self.by_name[chosen]
            if model is None and chosen in tried:
                filled, arguments_by = tried[chosen], "rules"
            else:
                filled, arguments_by = _arguments(card, task, context, model)
            if arguments_by != "model":
                filled = self.completed(card, task, filled)
        trace = {
            "1_scenario": found_scenarios,
            "2_intents": found_intents,
            "2_intents_by": intents_by,
            "5_arguments_by": arguments_by,
            "3_matching": [_matched(c) for c in top],
            "3_matching_by": matching_by,
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
            guessed=[] if filled is None else filled.guessed,
        )

    def completed(self, card: ToolCard, task: str, filled: Filled) -> Filled:
        """The rules' arguments for `card`, with the embedding model (where there is one)
        giving a required text parameter they left open the task's phrase most like it."""
        if self.encoder is None or not filled.missing:
            return filled
        return guessed(self.encoder, card, task, filled)

    def rank(
        self,
        asked: Asked,
        found_scenarios: list[str],
        found_intents: list[str],
        top_k: int,
        nearness: Nearness | None = None,
        tried: dict[str, Filled] | None = None,
    ) -> list[Candidate]:
        """Step 3 and step 4's weighing: the best `top_k` candidates (whitelisted ones
        that match first); by meaning as well as words given the task's `nearness` to
        each tool. The arguments tried for the first few are kept in `tried`."""
        task = asked.task
        wording = without_values(asked.ask, self.parameter_names)
        query = terms(wording)
        words = {t for t in query if not t.isdigit()}
        scores = self.index.scores(query)
        meant = [] if nearness is None else self._meant(nearness, asked)
        for index in meant:  # a tool sharing no word can still mean the task
            scores.setdefault(index, 0.0)
        self._take_written(task, scores)
        parts = clauses(wording)
        if len(parts) > 1:  # each part's best two come forward too
            top_score = max(scores.values(), default=0.0)
            for part in parts:
                part_scores = self.index.scores(terms(part))
                best = heapq.nsmallest(2, part_scores.items(), key=lambda kv: (-kv[1], kv[0]))
                for place, (index, _score) in enumerate(best):
                    scores[index] = max(scores.get(index, 0.0), top_score * (1.01 - 0.1 * place))
        tags = {tag for scenario in found_scenarios[:1] for tag in scenario_tags(scenario)}
        verbs = {s for intent in found_intents for s in intent_stems(intent)}
        listed = self._boosted(scores, tags, verbs, asked, max(top_k, SHORTLIST))
        kept = {index for _, index, _ in listed}
        listed += [(-scores[i], i, []) for i in meant if i not in kept]  # never crowded out
        shortlist = [
            Candidate(
                self.cards[i].name,
                -negated,
                self.index.relevance(i, words) + AGREEMENT * len(AGREEING_STEPS & set(why)),
                why,
            )
            for negated, i, why in listed
        ]
        if nearness is not None:
            for candidate, (_, index, _) in zip(shortlist, listed, strict=True):
                candidate.similarity = nearness.of(index)
        return self._weigh(shortlist, asked, {} if tried is None else tried)[:top_k]

    def _meant(self, nearness: Nearness, asked: Asked) -> list[int]:
        """The tools a task may mean though it shares no word with them: in a short list,
        every tool; in one of at most MEANING_LIST, the MEANT tools with requests made of
        them (built in) nearest the task in meaning; none that is blacklisted."""
        if self.small:
            meant: Sequence[int] = range(len(self.cards))
        elif self.modest:
            meant = nearness.nearest(nearness.embedded.requested, MEANT)
        else:
            return []
        return [index for index in meant if self.cards[index].name not in asked.excluded]

    def _take_written(self, task: str, scores: dict[int, float]) -> None:
        """A tool that takes a value the task writes out (a command, a URL, what to change
        into what) is a candidate, scored as the best by words (it may share no word with
        the task)."""
        if not self.takers:
            return
        facts = Facts.of(task)
        written = {kind for kind in WRITTEN if getattr(facts, kind)}
        if not written:
            return
        top_score = max(scores.values(), default=0.0) or 1.0
        for index, kinds in self.takers.items():
            if kinds & written:
                scores[index] = max(scores.get(index, 0.0), top_score)

    def _boosted(
        self,
        scores: dict[int, float],
        tags: set[str],
        verbs: set[str],
        asked: Asked,
        limit: int,
    ) -> list[tuple[float, int, list[str]]]:
        """The `limit` best cards by their words' score boosted for the task's scenario
        (`tags`), its intent (`verbs`) and the tool's history, as (-boosted score, index,
        why): the best first, ties in registry order. Cards are taken by their words'
        score, best first, until none left could come in even with the largest boost."""
        history = asked.history
        most = 1.0 + SCENARIO_BOOST + INTENT_BOOST
        most = max([most, *(with_history(most, record) for record in history.values())])
        name_words, tag_words = self.index.name_words, self.index.tag_words
        boosted: list[tuple[float, int, list[str]]] = []
        kept: list[float] = []  # the `limit` best boosted scores so far, a min-heap
        for index, score in sorted(scores.items(), key=itemgetter(1), reverse=True):
            if len(kept) == limit and score * most < kept[0]:
                break  # each card left scores no more than this one
            card = self.cards[index]
            if card.name in asked.excluded:
                continue
            why = []
            boost = 1.0
            if tags and (card.category in tags or not tags.isdisjoint(card.tags)):
                boost += SCENARIO_BOOST
                why.append("scenario")
            if verbs and not (
                verbs.isdisjoint(name_words[index]) and verbs.isdisjoint(tag_words[index])
            ):
                boost += INTENT_BOOST
                why.append("intent")
            record = history.get(card.name)
            if record is not None:
                boost = with_history(boost, record)
                why += history_reasons(record)
            value = score * boost
            boosted.append((-value, index, why))
            (heapq.heappush if len(kept) < limit else heapq.heappushpop)(kept, value)
        return heapq.nsmallest(limit, boosted)  # indexes differ: `why` is never compared

    def _weigh(
        self, shortlist: list[Candidate], asked: Asked, tried: dict[str, Filled]
    ) -> list[Candidate]:
        """Step 4's order: how well each covers the task, its cost, latency and whether its
        required parameters can be filled (tried for the first few); whitelisted first."""
        for candidate in shortlist:
            weigh_cost(candidate, self.by_name[candidate.name])
        weigh_latency(shortlist, asked.history)
        # The final order weighs how well each covers the task too.
        most = max((c.score * (RELEVANCE_WEIGHT + c.relevance) for c in shortlist), default=0.0)

        def order(candidate: Candidate) -> float:
            lexical = candidate.score * (RELEVANCE_WEIGHT + candidate.relevance) / (most or 1.0)
            return lexical * candidate.weight + SIMILARITY_RANK * (candidate.similarity or 0.0)

        shortlist.sort(key=lambda c: -order(c))
        for candidate in shortlist[:CHECK_DEPTH]:
            card = self.by_name[candidate.name]
            if candidate.name not in tried:
                tried[candidate.name] = fill(card, asked.task, asked.context)
            weigh_missing(candidate, card, tried[candidate.name].missing)
        shortlist.sort(key=lambda c: -order(c))
        return _whitelisted_first(shortlist, asked.whitelist)

    def _turned_down(
        self, top: list[Candidate], chosen: str, task: str, nearness: Nearness | None
    ) -> str | None:
        """Why the task asks for none of the built-in tools, where `chosen` is one (it has
        requests), neither whitelisted nor handed a value in a form only its kind takes
        (a URL, a command, what to change into what: the operator's list and the task's
        own values outweigh what it says): it asks for an answer in the chat (`chat`),
        or, weighed by meaning, it is like a request none of them serves (`unserved`)."""
        best = next(c for c in top if c.name == chosen)
        if (
            not self.by_name[chosen].requests
            or "whitelisted" in best.why
            or best.signals.get("formed")
        ):
            return None
        if (said := asks_in_chat(task)) is not None:
            return f"{CHAT_ONLY} ({said!r})"
        if nearness is None or best.similarity is None:
            return None
        found = self._unserved(nearness)
        return None if found is None else found.reason()

    def _unserved(self, nearness: Nearness) -> Unserved | None:
        """The request no built-in tool serves that the task is as near as to any built-in
        tool (`unserved`)."""
        nearest = max((nearness.of(index) for index in nearness.embedded.requested), default=None)
        if nearest is None:  # no tool with requests: none it could be turned away from
            return None
        # Prose it hands over is no request of its own ("commit with the message 'book a
        # table for two'"): what the task asks, without it, is what is weighed.
        vector = nearness.gist_vector if quotes_prose(nearness.task) else nearness.task_vector
        return unserved(nearness.embedded.encoder, vector, nearest, self.unserved_requests)

    def _task_words(self, task: str) -> set[str]:
        """The task's terms that say what it wants (values and numbers left out)."""
        return {t for t in terms(without_values(task, self.parameter_names)) if not t.isdigit()}

    def _sure(self, best: Candidate, task: str) -> bool:
        words = self._task_words(task)
        index = self.index.position[best.name]
        covers = bool(words) and words <= self.index.words[index]
        return best.relevance >= SURE_RELEVANCE or covers

    def _judge(
        self, top: list[Candidate], asked: Asked, tried: dict[str, Filled], bar: float
    ) -> None:
        """Step 4's judgement of the first candidates: their signals, the confidence that
        each fits (`judge`: by meaning where it was weighed), and the confidence each needs
        (`bar`, the log-odds asked, plus what its cost asks)."""
        words = self._task_words(asked.ask)
        seeks = sought(asked.task)
        judges = self.judges
        for candidate in top[:JUDGED]:
            index = self.index.position[candidate.name]
            card = self.by_name[candidate.name]
            lacks = lacked(seeks, self.index.words[index])
            filled = tried.get(candidate.name)
            if filled is None:
                filled = tried[candidate.name] = fill(card, asked.task, asked.context)
            found = signals(
                words,
                self.index.words[index],
                self.index.name_words[index],
                self.index.description_words[index],
                candidate.relevance,
                filled.missing,
                card.required,
                filled.recognised,
                filled.formed,
                len(lacks) / len(seeks) if seeks else 0.0,
            )
            if lacks:
                candidate.why.append(f"lacks {' '.join(lacks)}")
            judge = judges["words"]
            if candidate.similarity is not None:
                found["similarity"] = candidate.similarity
                judge = judges["meaning"]
            candidate.signals = {name: round(value, 4) for name, value in found.items()}
            candidate.confidence = round(judge.confidence(found), 4)
            candidate.needed = round(probability(bar + candidate.evidence), 4)

    def evaluate(self, top: list[Candidate]) -> tuple[str | None, str]:
        """Step 4: the best candidate, or None with why nothing fits (the candidates'
        confidence judged)."""
        if not top:
            return None, "no suitable tool: no tool shares a word with the task"
        best = top[0]
        if "whitelisted" in best.why:
            return best.name, (
                f"{best.name}: whitelisted, and it matches (confidence {best.confidence:.2f})"
            )
        if best.fits:
            return best.name, f"{best.name}: best match (confidence {best.confidence:.2f})"
        fitting = [c for c in top[1:FIT_DEPTH] if c.similarity is not None and c.fits]
        if fitting:
            chosen = fitting[0]
            return chosen.name, (
                f"{chosen.name}: the best match that fits (confidence {chosen.confidence:.2f}; "
                f"{best.name} ranks higher, at {best.confidence:.2f})"
            )
        return None, (
            f"no suitable tool: the best match, {best.name}, fits with confidence "
            f"{best.confidence:.2f} (at least {best.needed:.2f} needed)"
        )


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
    """Whitelisted candidates that match the task's words well enough (the operator's
    choice outweighs meaning) go first (stable order)."""
    for candidate in ranked:
        if candidate.name in whitelist and candidate.relevance >= MIN_RELEVANCE:
            candidate.why.append("whitelisted")
    return sorted(ranked, key=lambda c: "whitelisted" not in c.why)


def _matched(candidate: Candidate) -> dict[str, Any]:
    shown: dict[str, Any] = {"name": candidate.name, "score": round(candidate.score, 4)}
    if candidate.similarity is not None:
        shown["similarity"] = round(candidate.similarity, 4)
    if candidate.factors:
        shown["factors"] = candidate.factors
    if candidate.confidence is not None:
        shown["confidence"] = candidate.confidence
    return shown

"""Step 4's judge: the model's arithmetic (logistic, and with hidden units), the shipped
models, the fits (classes and sets weighed alike, the penalty, a network held to each
signal's direction), and what a selection says of its confidence."""

from __future__ import annotations

import math
import random

import pytest

from toolrun.selection.calibration import Example, fit_judge, fit_network
from toolrun.selection.cards import ToolCard
from toolrun.selection.judge import (
    BY_MEANING,
    BY_WORDS,
    LOWERING,
    RAISING,
    Hidden,
    Judge,
    log_odds,
    probability,
    shipped,
    signals,
)
from toolrun.selection.pipeline import Selector


def test_the_logit_is_the_weighted_sum_of_standardised_signals() -> None:
    judge = Judge(("a", "b"), 0.5, (2.0, -1.0), (1.0, 0.0), (0.5, 2.0))

    logit = judge.logit({"a": 2.0, "b": 4.0, "unused": 9.0})

    assert logit == pytest.approx(0.5 + 2.0 * (2.0 - 1.0) / 0.5 - 1.0 * 4.0 / 2.0)
    assert judge.confidence({"a": 2.0, "b": 4.0}) == pytest.approx(1 / (1 + math.exp(-logit)))
    with pytest.raises(KeyError):
        judge.logit({"a": 1.0})


def test_hidden_units_add_their_weighed_tanh_to_the_logit() -> None:
    units = (Hidden(0.5, (1.0, -2.0), 3.0), Hidden(-1.0, (0.0, 1.0), 0.5))
    judge = Judge(("a", "b"), 0.25, (0.0, 0.0), (1.0, 0.0), (0.5, 2.0), units)
    x = ((2.0 - 1.0) / 0.5, 4.0 / 2.0)

    logit = judge.logit({"a": 2.0, "b": 4.0})

    expected = 0.25 + 3.0 * math.tanh(0.5 + x[0] - 2.0 * x[1]) + 0.5 * math.tanh(-1.0 + x[1])
    assert logit == pytest.approx(expected)
    assert Judge.of(judge.as_dict()) == judge
    assert Judge.of({k: v for k, v in judge.as_dict().items() if k != "hidden"}).hidden == ()


@pytest.mark.parametrize(
    "bad",
    [
        {"weights": (1.0,)},  # one weight for two features
        {"scales": (1.0, 0.0)},  # a zero scale would divide by zero
        {"hidden": (Hidden(0.0, (1.0,), 1.0),)},  # a hidden unit weighing one of two
    ],
)
def test_a_malformed_judge_is_refused(bad: dict[str, tuple[object, ...]]) -> None:
    shape = {"weights": (1.0, 1.0), "means": (0.0, 0.0), "scales": (1.0, 1.0)} | bad

    with pytest.raises(ValueError, match="judge"):
        Judge(("a", "b"), 0.0, **shape)


def test_probabilities_and_log_odds_are_inverse_and_never_overflow() -> None:
    for confidence in (0.01, 0.5, 0.73, 0.99):
        assert probability(log_odds(confidence)) == pytest.approx(confidence)
    assert probability(-1000.0) == 0.0
    assert probability(1000.0) == 1.0
    for outside in (0.0, 1.0, -0.2, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            log_odds(outside)


def test_the_shipped_judges_cover_their_signals_and_favour_evidence() -> None:
    judges = shipped()

    assert judges["words"].features == BY_WORDS
    assert judges["meaning"].features == BY_MEANING
    # More of the task's words in the tool, more of its values given for their
    # parameters, or more similar in meaning: more confident.
    low = dict.fromkeys(BY_MEANING, 0.0) | {"task_length": 2.0}
    for judge in judges.values():
        for telling in ("relevance", "task_covered", "recognised", "formed"):
            assert judge.logit(low | {telling: 1.0}) > judge.logit(low)
    assert judges["meaning"].logit(low | {"similarity": 0.8}) > judges["meaning"].logit(low)
    # A tool lacking what the task seeks: less confident.
    for judge in judges.values():
        assert judge.logit(low | {"sought_missing": 1.0}) < judge.logit(low)
    assert judges["meaning"].as_dict() == Judge.of(judges["meaning"].as_dict()).as_dict()
    assert judges["meaning"].hidden  # by meaning, a network; by words, logistic
    assert not judges["words"].hidden


def _interacting(count: int, seed: int) -> list[Example]:
    """Examples that fit where x and y are both high or both low (log-odds 3 * x * y):
    no weight on x or y alone tells them apart."""
    rng = random.Random(seed)  # noqa: S311  # made data, not secrets
    made = []
    for _ in range(count):
        x, y = rng.uniform(-2, 2), rng.uniform(-2, 2)
        made.append(Example({"x": x, "y": y}, rng.random() < probability(3 * x * y), "a"))
    return made


def _right(judge: Judge, examples: list[Example]) -> float:
    return sum((judge.logit(e.signals) >= 0) == e.fits for e in examples) / len(examples)


def test_a_network_learns_what_signals_tell_together_and_a_logistic_model_cannot() -> None:
    train, test = _interacting(1500, seed=3), _interacting(500, seed=4)

    network = fit_network(train, ("x", "y"), raising=(), lowering=())
    logistic = fit_judge(train, ("x", "y"))

    assert _right(network, test) > 0.8
    assert _right(logistic, test) < 0.6
    assert fit_network(train, ("x", "y"), raising=(), lowering=()) == network  # repeatable


def test_a_network_is_held_to_each_signals_direction() -> None:
    # Made data where a raising signal's rise often lowers the chance of a fit: held to
    # its direction, the judge never gives a higher x a lower confidence.
    train = _interacting(1500, seed=5)

    held = fit_network(train, ("x", "y"), raising=("x",), lowering=("y",))
    free = fit_network(train, ("x", "y"), raising=(), lowering=())

    grid = [(-2 + 0.4 * i, -2 + 0.4 * j) for i in range(11) for j in range(11)]
    for x, y in grid:
        assert held.logit({"x": x + 0.1, "y": y}) >= held.logit({"x": x, "y": y}) - 1e-12
        assert held.logit({"x": x, "y": y + 0.1}) <= held.logit({"x": x, "y": y}) + 1e-12
    assert any(free.logit({"x": x + 0.1, "y": y}) < free.logit({"x": x, "y": y}) for x, y in grid)
    assert all(unit.out >= 0 for unit in held.hidden)


def test_the_shipped_network_is_held_to_the_known_directions() -> None:
    meaning = shipped()["meaning"]
    assert not any(meaning.weights)  # no direct weights: every signal goes through the units
    for unit in meaning.hidden:
        assert unit.out >= 0
        for name, weight in zip(meaning.features, unit.weights, strict=True):
            if name in RAISING:
                assert weight >= 0, name
            if name in LOWERING:
                assert weight <= 0, name


def test_signals_are_shares_of_words_each_way() -> None:
    found = signals(
        task_words={"book", "hotel", "porto"},
        tool_words={"book", "hotel", "room", "citi"},
        name_words={"hotel", "book"},
        description_words={"book", "room", "citi", "night"},
        relevance=1.7,
        missing=["nights"],
        required=["city", "nights"],
        recognised=1.0,
        formed=0.0,
        sought_missing=0.5,
    )

    assert found == pytest.approx(
        {
            "relevance": 1.7,
            "task_covered": 2 / 3,
            "name_covered": 1.0,
            "description_covered": 1 / 4,
            "task_length": math.log(4),
            "missing": 0.5,
            "recognised": 1.0,
            "formed": 0.0,
            "sought_missing": 0.5,
        }
    )


def _examples(count: int, group: str, slope: float, seed: int) -> list[Example]:
    """Examples whose chance of fitting rises with `x` (log-odds slope * x)."""
    rng = random.Random(seed)  # noqa: S311  # made data, not secrets
    made = []
    for _ in range(count):
        x = rng.uniform(-3, 3)
        made.append(
            Example(
                {"x": x, "noise": rng.gauss(0, 1)}, rng.random() < probability(slope * x), group
            )
        )
    return made


def test_the_fit_finds_the_signal_that_matters_and_ignores_noise() -> None:
    judge = fit_judge(_examples(4000, "a", 2.0, seed=1), ("x", "noise"), penalty=0.0)

    weight_x = judge.weights[0] / judge.scales[0]  # per unit of x
    assert weight_x == pytest.approx(2.0, rel=0.15)
    assert abs(judge.weights[1]) < 0.15


def test_every_set_and_both_classes_weigh_alike() -> None:
    # Set "big" holds 20 times more fitting examples than "small", and "small" only ones
    # that do not fit: weighed by count, the judge would call x=0 fitting.
    big = [Example({"x": 1.0}, True, "big") for _ in range(2000)]
    small = [Example({"x": -1.0}, False, "small") for _ in range(100)]

    judge = fit_judge(big + small, ("x",), penalty=0.0001)

    assert judge.confidence({"x": 0.0}) == pytest.approx(0.5, abs=0.01)


def test_the_penalty_shrinks_the_weights() -> None:
    examples = _examples(300, "a", 3.0, seed=2)

    loose = fit_judge(examples, ("x",), penalty=0.0)
    tight = fit_judge(examples, ("x",), penalty=300.0)

    assert 0 < tight.weights[0] < loose.weights[0]


def test_a_fit_needs_both_kinds_of_example() -> None:
    with pytest.raises(ValueError, match="fit and examples that do not"):
        fit_judge([Example({"x": 1.0}, True, "a")] * 3, ("x",))
    with pytest.raises(ValueError, match="fit and examples that do not"):
        fit_judge([], ("x",))


HOTEL = ToolCard.parse(
    {
        "name": "book_hotel",
        "description": "Book a hotel room in a city for some nights",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
            "required": ["city", "nights"],
        },
    }
)


def test_a_selection_gives_each_candidate_its_confidence_and_the_bar_asked() -> None:
    task = "Book a hotel room in Porto for 3 nights"

    usual = Selector([HOTEL]).select(task)
    strict = Selector([HOTEL]).select(task, min_confidence=0.999)

    [candidate] = usual.candidates
    assert candidate.confidence is not None
    assert candidate.confidence > 0.5
    assert set(candidate.signals) == set(BY_WORDS)
    assert candidate.needed == 0.5
    assert usual.chosen == "book_hotel"
    assert f"confidence {candidate.confidence:.2f}" in usual.reason
    assert usual.trace["3_matching"][0]["confidence"] == candidate.confidence
    assert strict.chosen is None
    assert strict.reason.startswith("no suitable tool")
    assert "at least 1.00 needed" in strict.reason
    with pytest.raises(ValueError, match="between 0 and 1"):
        Selector([HOTEL]).select(task, min_confidence=1.0)


def test_a_costly_tool_needs_more_confidence() -> None:
    admin = ToolCard(HOTEL.name, HOTEL.description, HOTEL.parameters, permission="admin")
    execute = ToolCard(HOTEL.name, HOTEL.description, HOTEL.parameters, permission="execute")
    task = "Book a hotel room in Porto for 3 nights"

    needed = {
        card.permission: Selector([card]).select(task).candidates[0].needed
        for card in (HOTEL, execute, admin)
    }

    assert needed[None] == 0.5
    assert 0.5 < needed["execute"] < needed["admin"] < 1.0

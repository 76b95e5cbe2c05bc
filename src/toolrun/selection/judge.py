"""Step 4's judgement: does a candidate do what the task asks, or is there no suitable
tool? A model over what the earlier steps measured of the candidate (its signals) gives
the probability that it fits — its `confidence`.

The models are fitted on the development data, every set weighed alike, and checked
set by set on data they were not fitted on (`bench/selection.py calibrate`, which writes
`judge.json` here; docs/selection.md has the figures). There are two: one for
candidates weighed by words alone (a logistic model), one for those weighed by meaning
too (with the embedding model), whose signals include the similarity in meaning (a
logistic model over eight hidden units: which signal tells depends on the others).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from typing import Any

from toolrun.selection.evaluation import missing_share

# What a candidate's signals are (`signals`), in the models' order.
BY_WORDS = (
    "relevance",  # LexicalIndex.relevance, plus the steps' agreement (0 to 2.9)
    "task_covered",  # share of the task's words the tool has
    "name_covered",  # share of the tool's telling name words the task has
    "description_covered",  # share of its description words the task has
    "task_length",  # log(1 + the task's words)
    "missing",  # share of its required parameters the task cannot fill (step 5's rules)
    "recognised",  # share of the values step 5 found that the task gives for their
    # parameter: named by it or in its form, not the first name or number left
    "formed",  # 1 where step 5 found a value in a form only one kind of tool takes (a
    # command, a URL or a website, an e-mail address), else 0
    "sought_missing",  # share of the words of what the task seeks ("what is the freezing
    # point of …": freezing point) that the tool lacks; 0 where it does not say (`sought`)
)
# … and the cosine of the task's and the tool's embeddings (its best text's, or its best
# request's by their gists: `nearness`).
BY_MEANING = (*BY_WORDS, "similarity")
# Which way a signal moves the confidence, where that is known: a judge with hidden units
# is fitted held to it (more of the task's words in a tool never makes a fit less likely).
RAISING = ("relevance", "task_covered", "name_covered", "recognised", "formed", "similarity")
LOWERING = ("missing", "sought_missing")
DEFAULT_CONFIDENCE = 0.5  # a candidate fits when it more likely fits than not


@dataclass(frozen=True)
class Hidden:
    """A hidden unit: tanh(bias + the sum of weight * standardised signal), which adds
    `out` times itself to the judge's log-odds."""

    bias: float
    weights: tuple[float, ...]
    out: float


@dataclass(frozen=True)
class Judge:
    """P(fits) = 1 / (1 + exp(-z)), where z is the intercept, plus the sum of weight * x
    over its features, x = (signal - mean) / scale, plus each hidden unit's `out` times
    its value (no hidden units: a logistic model)."""

    features: tuple[str, ...]
    intercept: float
    weights: tuple[float, ...]
    means: tuple[float, ...]
    scales: tuple[float, ...]
    hidden: tuple[Hidden, ...] = ()

    def __post_init__(self) -> None:
        count = len(self.features)
        if not (len(self.weights) == len(self.means) == len(self.scales) == count):
            raise ValueError(f"a judge needs a weight, mean and scale for each of {count} features")
        if any(len(unit.weights) != count for unit in self.hidden):
            raise ValueError(f"a judge's hidden units need a weight for each of {count} features")
        if any(scale <= 0 for scale in self.scales):
            raise ValueError("a judge's scales must be positive")

    def logit(self, signals: Mapping[str, float]) -> float:
        """The log-odds that a candidate with these signals fits.

        Raises:
            KeyError: a feature the signals lack.
        """
        x = [
            (signals[name] - mean) / scale
            for name, mean, scale in zip(self.features, self.means, self.scales, strict=True)
        ]
        total = self.intercept + _dot(self.weights, x)
        for unit in self.hidden:
            total += unit.out * math.tanh(unit.bias + _dot(unit.weights, x))
        return total

    def confidence(self, signals: Mapping[str, float]) -> float:
        """The probability that a candidate with these signals fits."""
        return probability(self.logit(signals))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, found: Mapping[str, Any]) -> Judge:
        return cls(
            features=tuple(str(name) for name in found["features"]),
            intercept=float(found["intercept"]),
            weights=tuple(float(x) for x in found["weights"]),
            means=tuple(float(x) for x in found["means"]),
            scales=tuple(float(x) for x in found["scales"]),
            hidden=tuple(
                Hidden(
                    float(unit["bias"]),
                    tuple(float(x) for x in unit["weights"]),
                    float(unit["out"]),
                )
                for unit in found.get("hidden", ())
            ),
        )


def _dot(weights: Sequence[float], x: Sequence[float]) -> float:
    return sum(weight * value for weight, value in zip(weights, x, strict=True))


def probability(logit: float) -> float:
    """The probability of these log-odds, without overflow."""
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    odds = math.exp(logit)
    return odds / (1.0 + odds)


def log_odds(confidence: float) -> float:
    """The logit of a probability strictly between 0 and 1.

    Raises:
        ValueError: a confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"a confidence is between 0 and 1 (exclusive), not {confidence}")
    return math.log(confidence / (1.0 - confidence))


def signals(
    task_words: set[str],
    tool_words: set[str],
    name_words: set[str],
    description_words: set[str],
    relevance: float,
    missing: Sequence[str],
    required: Sequence[str],
    recognised: float,
    formed: float,
    sought_missing: float,
) -> dict[str, float]:
    """The signals of one candidate by words (`BY_WORDS`); by meaning, add its
    similarity."""
    return {
        "relevance": relevance,
        "task_covered": _share(task_words, tool_words),
        "name_covered": _share(name_words, task_words),
        "description_covered": _share(description_words, task_words),
        "task_length": math.log1p(len(task_words)),
        "missing": missing_share(missing, required),
        "recognised": recognised,
        "formed": formed,
        "sought_missing": sought_missing,
    }


def _share(part: set[str], whole: set[str]) -> float:
    """The share of `part` found in `whole` (0 for an empty `part`)."""
    return len(part & whole) / len(part) if part else 0.0


JUDGE_FILE = "judge.json"


@cache
def shipped() -> dict[str, Judge]:
    """The fitted models, by how candidates were weighed: "words", "meaning"."""
    text = resources.files("toolrun.selection").joinpath(JUDGE_FILE).read_text(encoding="utf-8")
    found = json.loads(text)
    return {kind: Judge.of(found["judges"][kind]) for kind in ("words", "meaning")}

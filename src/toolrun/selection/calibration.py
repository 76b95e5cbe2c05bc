"""Fitting step 4's judge (`judge.Judge`) on labelled examples, and checking it on data
it was not fitted on. Needs numpy (the `semantic` extra); `bench/selection.py calibrate`
uses it on the development data.

An example is one candidate's signals, whether it fits the task, and the data set it
comes from. Every set weighs the same in the fit, and within it the candidates that fit
and those that do not weigh the same, so that no set's size or mix decides the model: a
candidate fits when that is more likely than not, whatever the data's proportions. The
fit is a logistic regression with an L2 penalty on the standardised signals (Newton's
method), or (`fit_network`) the same over a layer of hidden units (tanh), fitted by
gradient descent (Adam) from a fixed start, so the same examples give the same judge,
and held to the direction each signal is known to move the confidence (`judge.RAISING`,
`judge.LOWERING`): each hidden unit's weight on such a signal has that sign, and the
units' weights out are not negative, so the confidence is monotone in those signals.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from toolrun.selection.judge import LOWERING, RAISING, Hidden, Judge

PENALTY = 30.0  # L2 on the standardised weights: the folds preferred it to 1 (less to trust)
STEPS = 100
TOLERANCE = 1e-9
UNITS = 8  # hidden units of a network judge: 4, 8 and 16 did alike on the folds
NETWORK_PENALTY = 3.0  # its L2 on the weights: on the folds, better than 1, 10 or 30
NETWORK_STEPS = 3000
LEARNING_RATE = 0.01


@dataclass(frozen=True)
class Example:
    signals: dict[str, float]
    fits: bool
    group: str  # the data set it comes from


def fit_judge(
    examples: Sequence[Example], features: Sequence[str], penalty: float = PENALTY
) -> Judge:
    """The logistic judge fitted on `examples` over `features`.

    Raises:
        ValueError: no example that fits, or none that does not.
    """
    data = _Data.of(examples, features)
    design = np.hstack([np.ones((len(data.x), 1)), data.x])
    weights = data.weights * len(data.x)  # summing to the number of examples
    penalised = np.full(design.shape[1], penalty)
    penalised[0] = 0.0  # not the intercept
    beta = np.zeros(design.shape[1])
    for _ in range(STEPS):
        predicted = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (weights * (predicted - data.labels)) + penalised * beta
        curvature = (design * (weights * predicted * (1 - predicted))[:, None]).T @ design
        step = np.linalg.solve(curvature + np.diag(penalised), gradient)
        beta -= step
        if float(np.abs(step).max()) < TOLERANCE:
            break
    return data.judge(float(beta[0]), beta[1:])


def fit_network(
    examples: Sequence[Example],
    features: Sequence[str],
    units: int = UNITS,
    penalty: float = NETWORK_PENALTY,
    raising: Collection[str] = RAISING,
    lowering: Collection[str] = LOWERING,
) -> Judge:
    """A judge of `units` hidden units fitted on `examples` over `features` (the weighted
    log-loss plus the L2 penalty on every weight but the biases, as `fit_judge`'s), from
    a start drawn with a fixed seed; its confidence never falls as a `raising` signal
    rises, nor rises as a `lowering` one does.

    Raises:
        ValueError: no example that fits, or none that does not.
    """
    data = _Data.of(examples, features)
    x, labels, weights = data.x, data.labels, data.weights  # weights summing to 1
    count, width = x.shape
    shrink = penalty / count
    rng = np.random.default_rng(0)
    inner = math.sqrt(6 / (width + units))  # Glorot's uniform start
    outer = math.sqrt(6 / (units + 1))
    params = [
        rng.uniform(-inner, inner, (width, units)),  # into the hidden units
        np.zeros(units),  # their biases
        rng.uniform(-outer, outer, units),  # out of them
        np.zeros(1),  # the intercept
    ]
    signs = np.array([[1.0 if f in raising else -1.0 if f in lowering else 0.0] for f in features])
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, NETWORK_STEPS + 1):
        into, biases, out, intercept = params
        hidden = np.tanh(x @ into + biases)
        predicted = 1.0 / (1.0 + np.exp(-(hidden @ out + intercept[0])))
        error = weights * (predicted - labels)  # the loss's slope in each example's logit
        back = np.outer(error, out) * (1 - hidden**2)
        gradients = [
            x.T @ back + shrink * into,
            back.sum(axis=0),
            hidden.T @ error + shrink * out,
            np.array([error.sum()]),
        ]
        for i, gradient in enumerate(gradients):  # Adam
            first[i] = 0.9 * first[i] + 0.1 * gradient
            second[i] = 0.999 * second[i] + 0.001 * gradient**2
            moved = first[i] / (1 - 0.9**step)
            scaled = np.sqrt(second[i] / (1 - 0.999**step)) + 1e-8
            params[i] = params[i] - LEARNING_RATE * moved / scaled
        held = np.maximum(params[0] * signs, 0.0) * signs + 0.0  # of its sign, or 0 (not -0)
        params[0] = np.where(signs == 0, params[0], held)
        params[2] = np.maximum(params[2], 0.0)
    into, biases, out, intercept = params
    hidden_units = tuple(
        Hidden(float(biases[j]), tuple(float(w) for w in into[:, j]), float(out[j]))
        for j in range(units)
    )
    return data.judge(float(intercept[0]), np.zeros(width), hidden_units)


@dataclass(frozen=True)
class _Data:
    """Examples as a fit takes them: the standardised signals, the labels, and the
    examples' weights (summing to 1)."""

    features: tuple[str, ...]
    x: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    means: np.ndarray
    scales: np.ndarray

    @classmethod
    def of(cls, examples: Sequence[Example], features: Sequence[str]) -> _Data:
        labels = np.array([example.fits for example in examples], dtype=float)
        if labels.size == 0 or labels.min() == labels.max():
            raise ValueError("fitting a judge needs examples that fit and examples that do not")
        raw = np.array([[example.signals[name] for name in features] for example in examples])
        means = raw.mean(axis=0)
        scales = raw.std(axis=0)
        scales[scales <= 0] = 1.0  # a signal that never varies carries no weight
        weights = _balanced([example.group for example in examples], labels)
        x = (raw - means) / scales
        return cls(tuple(features), x, labels, weights / weights.sum(), means, scales)

    def judge(
        self, intercept: float, weights: np.ndarray, hidden: tuple[Hidden, ...] = ()
    ) -> Judge:
        return Judge(
            features=self.features,
            intercept=intercept,
            weights=tuple(float(w) for w in weights),
            means=tuple(float(m) for m in self.means),
            scales=tuple(float(s) for s in self.scales),
            hidden=hidden,
        )


def _balanced(groups: Sequence[str], labels: np.ndarray) -> np.ndarray:
    """Example weights: each (group, label) cell the same total within its label, each
    label half of the whole, summing to the number of examples."""
    weights = np.zeros(len(labels))
    names = np.array(groups)
    for label in (0.0, 1.0):
        of_label = labels == label
        cells = [names == group for group in sorted(set(names[of_label]))]
        for cell in cells:
            chosen = cell & of_label
            weights[chosen] = 1.0 / (chosen.sum() * len(cells))
    return weights * len(labels) / 2.0

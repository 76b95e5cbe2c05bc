"""Fitting step 4's judge (`judge.Judge`) on labelled examples, and checking it on data
it was not fitted on. Needs numpy (the `semantic` extra); `bench/selection.py calibrate`
uses it on the development data.

An example is one candidate's signals, whether it fits the task, and the data set it
comes from. Every set weighs the same in the fit, and within it the candidates that fit
and those that do not weigh the same, so that no set's size or mix decides the model: a
candidate fits when that is more likely than not, whatever the data's proportions. The
fit is a logistic regression with an L2 penalty on the standardised signals (Newton's
method).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolrun.selection.judge import Judge

PENALTY = 30.0  # L2 on the standardised weights: the folds preferred it to 1 (less to trust)
STEPS = 100
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Example:
    signals: dict[str, float]
    fits: bool
    group: str  # the data set it comes from


def fit_judge(
    examples: Sequence[Example], features: Sequence[str], penalty: float = PENALTY
) -> Judge:
    """The judge fitted on `examples` over `features`.

    Raises:
        ValueError: no example that fits, or none that does not.
    """
    labels = np.array([example.fits for example in examples], dtype=float)
    if labels.size == 0 or labels.min() == labels.max():
        raise ValueError("fitting a judge needs examples that fit and examples that do not")
    raw = np.array([[example.signals[name] for name in features] for example in examples])
    means = raw.mean(axis=0)
    scales = raw.std(axis=0)
    scales[scales <= 0] = 1.0  # a signal that never varies carries no weight
    design = np.hstack([np.ones((len(raw), 1)), (raw - means) / scales])
    weights = _balanced([example.group for example in examples], labels)
    penalised = np.full(design.shape[1], penalty)
    penalised[0] = 0.0  # not the intercept
    beta = np.zeros(design.shape[1])
    for _ in range(STEPS):
        predicted = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (weights * (predicted - labels)) + penalised * beta
        curvature = (design * (weights * predicted * (1 - predicted))[:, None]).T @ design
        step = np.linalg.solve(curvature + np.diag(penalised), gradient)
        beta -= step
        if float(np.abs(step).max()) < TOLERANCE:
            break
    return Judge(
        features=tuple(features),
        intercept=float(beta[0]),
        weights=tuple(float(w) for w in beta[1:]),
        means=tuple(float(m) for m in means),
        scales=tuple(float(s) for s in scales),
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

"""`bench/selection.py calibrate`'s separation: how well the judge, on tools it was not
fitted on, tells a tool that fits from a near miss (bench/selection_judge.py)."""

from __future__ import annotations

import math

import pytest
from bench.selection_judge import (
    GOAL_REFUSED,
    Decided,
    Fold,
    Judged,
    Judges,
    Seen,
    area_under_curve,
    separation,
)

from toolrun.selection.judge import Judge

# A judge whose log-odds are the candidate's "score": its margin over the bar.
BY_SCORE = Judges(Judge(("score",), 0.0, (1.0,), (0.0,), (1.0,)))


def seen(score: float, *, right: bool = False) -> Seen:
    return Seen({"score": score}, 0.0, right, None)


def question(group: str, *candidates: Seen) -> Judged:
    fits = group != "irrelevance"
    return Judged(group, fits, False, list(candidates), frozenset({"t"}), group)


def test_the_area_under_the_curve_is_the_chance_a_fit_outranks_a_near_miss() -> None:
    assert area_under_curve([3.0, 2.0], [1.0, 0.0]) == 1.0
    assert area_under_curve([0.0], [1.0, 2.0]) == 0.0
    assert area_under_curve([1.0], [1.0]) == 0.5  # a tie counts half
    # 2 beats 1 and 0; 0.5 beats 0 only; 1 ties 1 (half): (2 + 1 + 0.5 + 1) / 6
    assert area_under_curve([2.0, 0.5, 1.0], [1.0, 0.0]) == pytest.approx(4.5 / 6)
    assert area_under_curve([1.0], [-math.inf]) == 1.0  # a near miss with no candidate
    assert math.isnan(area_under_curve([], [1.0]))


def test_a_question_is_decided_by_the_first_candidate_that_clears_the_moved_bar() -> None:
    wrong_then_right = Decided("multiple", True, ((0.5, seen(0.5)), (0.2, seen(0.2, right=True))))
    right_after_wrong = Decided("multiple", True, ((0.2, seen(0.2)), (0.5, seen(0.5, right=True))))
    near_miss = Decided("irrelevance", False, ((0.3, seen(0.3)),))

    assert not wrong_then_right.right(0.0)  # the wrong first candidate clears the bar
    assert not wrong_then_right.right(0.3)  # ...and still does; the right one no longer
    assert wrong_then_right.chosen(0.6) is None
    assert not right_after_wrong.right(0.0)  # the first clears it: chosen, wrong
    assert right_after_wrong.right(0.3)  # the first no longer does: the next is chosen
    assert not near_miss.right(0.0)
    assert near_miss.right(0.4)  # refused once the bar is above its margin


def test_separation_reports_the_trade_at_each_goal() -> None:
    fits = [question("live_simple", seen(s, right=True)) for s in (3.0, 2.0, 1.0, 0.0, -1.0)]
    misses = [question("irrelevance", seen(s)) for s in (2.5, 0.5, -0.5, -1.5, -2.0, -3.0)]
    missed_ranking = question("live_simple", seen(4.0))  # its first candidate is not the answer
    # toolrun's own tasks that no tool does are no BFCL near misses: not in the measure.
    not_bfcl = Judged("toolrun", False, False, [seen(9.0)], frozenset({"t"}), "toolrun")
    fold = Fold((BY_SCORE, None), ([*fits, missed_ranking, *misses, not_bfcl], None))

    found = separation([fold])

    assert set(found) == {"words"}  # no judge by meaning, no figures for it
    live = found["words"]["live_simple"]
    # Pair by pair, the fits outrank the near misses 6 + 5 + 5 + 4 + 3 times of 30 (the
    # ranking's miss is left out).
    assert live["auc"] == pytest.approx(23 / 30, abs=1e-4)
    # Refusing 0.85 of the near misses (all 6: 5 of 6 is less) takes a bar above 2.5,
    # where only the fit at 3.0 is chosen: 1 of the set's 6 questions.
    assert GOAL_REFUSED > 5 / 6
    assert live["right_at_goal_refused"] == pytest.approx(1 / 6, abs=1e-4)
    # 0.90 of the set right is out of reach: at most 5 of its 6 are.
    assert live["refused_at_goal_right"] is None


def test_separation_gives_the_share_refused_where_the_goal_for_fits_is_met() -> None:
    fits = [question("multiple", seen(float(s), right=True)) for s in range(1, 11)]
    misses = [question("irrelevance", seen(float(s))) for s in range(-5, 5)]

    multiple = separation([Fold((BY_SCORE, None), ([*fits, *misses], None))])["words"]["multiple"]

    # The highest bar with 9 of 10 fits chosen is 2; below it, 7 near misses (-5 to 1).
    assert multiple["refused_at_goal_right"] == pytest.approx(0.7, abs=1e-4)
    # Refusing 0.85 of them (9 of 10) takes a bar above 3, which 7 of the fits clear.
    assert multiple["right_at_goal_refused"] == pytest.approx(0.7, abs=1e-4)
    assert 0.5 < multiple["auc"] < 1

"""Step 4's weighing of a candidate beyond its words: its latency against the other
candidates', its cost (or, without one, its permission level: an admin tool, which can
destroy, needs more evidence than a read-only one), and whether its required parameters
can be filled — each factor multiplies the candidate's lexical order and is named in its
trace; and its history (success rate and rating), which multiplies its boost before the
shortlist is cut and is shown in its `why`."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from toolrun.selection.cards import ToolCard

if TYPE_CHECKING:
    from toolrun.selection.pipeline import Candidate, Record

# A card's permission level as a cost from 0 to 1 where it states no cost of its own.
PERMISSION_COST = {"read_only": 0.0, "read_write": 0.25, "execute": 0.5, "admin": 1.0}
COST_WEIGHT = 0.1  # order * (1 - COST_WEIGHT * cost)
COST_EVIDENCE = 2.5  # log-odds of fitting a tool of cost c needs beyond the usual bar, times c²
LATENCY_EXPONENT = 0.2  # order * (median p50 / p50) ** this, within LATENCY_BOUNDS
LATENCY_BOUNDS = (0.8, 1.1)
MISSING_WEIGHT = 0.3  # order * (1 - MISSING_WEIGHT * share of required parameters missing)


def cost(card: ToolCard) -> float:
    """The card's cost from 0 to 1: its own, else its permission level's, else 0."""
    if card.cost is not None:
        return min(max(card.cost, 0.0), 1.0)
    return PERMISSION_COST.get(card.permission or "read_only", 0.0)


def weigh_cost(candidate: Candidate, card: ToolCard) -> None:
    """A costly (or powerful) tool ranks a little lower and needs more evidence to fit."""
    spent = cost(card)
    if spent > 0:
        candidate.factors["cost"] = round(1 - COST_WEIGHT * spent, 3)
        candidate.evidence = COST_EVIDENCE * spent**2
        shown = f"permission {card.permission}" if card.cost is None else f"cost {spent:.2f}"
        candidate.why.append(shown)


def weigh_latency(candidates: Sequence[Candidate], history: Mapping[str, Record]) -> None:
    """Candidates slower than the median of those with a known p50 rank lower, faster
    ones a little higher."""
    timed = {c.name: p50 for c in candidates if (p50 := _p50(history, c.name)) is not None}
    if len(timed) < 2:
        return
    median = statistics.median(timed.values())
    low, high = LATENCY_BOUNDS
    for candidate in candidates:
        p50 = timed.get(candidate.name)
        if p50 is None or p50 <= 0 or median <= 0:
            continue
        factor = min(max((median / p50) ** LATENCY_EXPONENT, low), high)
        if abs(factor - 1) >= 0.005:
            candidate.factors["latency"] = round(factor, 3)
            candidate.why.append(f"latency {p50 / median:.1f}x the median")


def missing_share(missing: Sequence[str], required: Sequence[str]) -> float:
    """The share of the required parameters left open, at most 1 (`missing` may hold
    parameters a rule of the schema requires as well)."""
    return min(1.0, len(missing) / len(required)) if required else 0.0


def weigh_missing(candidate: Candidate, card: ToolCard, missing: Sequence[str]) -> None:
    """A candidate whose required parameters the task cannot fill ranks lower."""
    if missing and card.required:
        share = missing_share(missing, card.required)
        candidate.factors["missing"] = round(1 - MISSING_WEIGHT * share, 3)
        candidate.why.append(f"cannot fill {', '.join(missing)}")


def _p50(history: Mapping[str, Record], name: str) -> float | None:
    record = history.get(name)
    return None if record is None else record.p50_ms


def with_history(boost: float, record: Record) -> float:
    """`boost` times what a tool's history says of it: its success rate, then its rating
    around the middle 3 of 5 (one factor after the other)."""
    boost *= 0.5 + record.success_rate / 2
    if record.rating is not None:
        boost *= 1 + 0.1 * (record.rating - 3)
    return boost


def history_reasons(record: Record) -> list[str]:
    """Why `with_history` moved a tool."""
    why = [f"history {record.success_rate:.0%} success"]
    if record.rating is not None:
        why.append(f"rated {record.rating:.1f}/5")
    return why

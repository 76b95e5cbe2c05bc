"""Policy levels: whether a call runs at once, waits for a human, or needs explicit authority.

A tool judges each call (`Tool.assess`: a risk and a warning, or nothing to say); the
configuration maps the risk to a policy, and may raise a whole tool to a higher floor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Risk(StrEnum):
    """How much harm a tool, or one call of it, can do when misused."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Policy(StrEnum):
    """safe runs at once; confirm waits for approval; dangerous waits for an operator's
    explicit authority (never auto-approved)."""

    SAFE = "safe"
    CONFIRM = "confirm"
    DANGEROUS = "dangerous"

    @property
    def rank(self) -> int:
        return list(Policy).index(self)


DEFAULT_RISK_POLICY: dict[Risk, Policy] = {
    Risk.LOW: Policy.SAFE,
    Risk.MEDIUM: Policy.CONFIRM,
    Risk.HIGH: Policy.DANGEROUS,
}


@dataclass(frozen=True)
class Concern:
    """What a tool has to say about one call: how risky it is and why."""

    risk: Risk
    warning: str


@dataclass(frozen=True)
class Verdict:
    """The policy for one call, with the risk and the warning shown to approvers."""

    policy: Policy
    risk: Risk
    warning: str

    @property
    def needs_approval(self) -> bool:
        return self.policy is not Policy.SAFE


def verdict_for(
    tool_name: str,
    concern: Concern | None,
    *,
    risk_policy: Mapping[Any, str],
    tool_floor: Mapping[str, str],
) -> Verdict:
    """The stricter of the risk's policy and the tool's configured floor (settings
    TOOLRUN_RISK_POLICY and TOOLRUN_TOOL_POLICIES, already validated)."""
    floor = Policy(tool_floor.get(tool_name, Policy.SAFE))
    if concern is None:
        return Verdict(floor, Risk.LOW, f"{tool_name} is configured as {floor}")
    by_risk = Policy(risk_policy.get(concern.risk, DEFAULT_RISK_POLICY[concern.risk]))
    policy = max(by_risk, floor, key=lambda p: p.rank)
    return Verdict(policy, concern.risk, concern.warning)

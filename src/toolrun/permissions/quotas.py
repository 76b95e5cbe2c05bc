"""An agent's quotas: how fast it may queue calls, and how many it may have open.

A profile sets any of them; the others are the platform's defaults (`Settings.agent_*`).
0 means no limit. What enforces them is `calls.quotas`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from toolrun.config import Settings

MIN_RATE_PER_S = 0.001  # one call in about 17 minutes: below it, set no rate or revoke
MAX_RATE_PER_S = 1_000_000.0
MAX_COUNT = 2**31 - 1  # what a database integer column holds


@dataclass(frozen=True)
class Quota:
    """Limits on one agent's calls; None: the platform's default."""

    rate_per_s: float | None = None  # calls queued per second, on average (a token bucket)
    burst: int | None = None  # calls it may queue at once above that rate (0: twice the rate)
    max_in_flight: int | None = None  # calls queued or running
    max_queued: int | None = None  # calls waiting for a worker

    def problem(self) -> str | None:
        """Why these limits cannot be set (not finite, out of range), or None."""
        rate = self.rate_per_s
        if rate is not None and not (
            rate == 0 or MIN_RATE_PER_S <= rate <= MAX_RATE_PER_S  # NaN fails both
        ):
            return (
                f"rate_per_s must be 0 (no limit) or between {MIN_RATE_PER_S:g} and "
                f"{MAX_RATE_PER_S:g}, not {rate:g}"
            )
        for name in QUOTA_COUNTS:
            value = getattr(self, name)
            if value is not None and not 0 <= value <= MAX_COUNT:
                return f"{name} must be between 0 (no limit) and {MAX_COUNT}, not {value}"
        return None

    @classmethod
    def defaults(cls, settings: Settings) -> Quota:
        return cls(
            rate_per_s=settings.agent_rate_per_s,
            burst=settings.agent_burst,
            max_in_flight=settings.agent_max_in_flight,
            max_queued=settings.agent_max_queued,
        )

    def over(self, defaults: Quota) -> Quota:
        """These limits, each unset one taken from `defaults`."""
        return replace(
            self,
            **{
                field.name: getattr(defaults, field.name)
                for field in fields(self)
                if getattr(self, field.name) is None
            },
        )

    @property
    def bucket_size(self) -> float:
        """The token bucket's size: `burst`, or twice the rate (at least 1)."""
        rate = self.rate_per_s or 0.0
        return float(self.burst) if self.burst else max(1.0, 2 * rate)

    def as_dict(self) -> dict[str, float | int | None]:
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def of(cls, limits: dict[str, float | int]) -> Quota:
        """The quota of limits by name (as the API and the CLI take them)."""
        rate = limits.get("rate_per_s")
        burst, in_flight, queued = (limits.get(name) for name in QUOTA_COUNTS)
        return cls(
            rate_per_s=None if rate is None else float(rate),
            burst=None if burst is None else int(burst),
            max_in_flight=None if in_flight is None else int(in_flight),
            max_queued=None if queued is None else int(queued),
        )

    def shown(self, defaults: Quota) -> dict[str, Any]:
        """The limits in force (0: no limit; `burst` the bucket's size, 0 with no rate),
        and `own`: those this quota sets, the others being `defaults`."""
        limits = self.over(defaults)
        return {
            "rate_per_s": limits.rate_per_s or 0,
            "burst": limits.bucket_size if limits.rate_per_s else 0,
            "max_in_flight": limits.max_in_flight or 0,
            "max_queued": limits.max_queued or 0,
            "own": [name for name, value in self.as_dict().items() if value is not None],
        }


QUOTA_COUNTS = ("burst", "max_in_flight", "max_queued")  # the limits that are whole numbers
NO_QUOTA = Quota()  # a profile that sets none: the platform's defaults throughout

"""What an agent may do besides calling tools (standard library only: the CLI's options
name it before anything heavy is imported)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What an agent may do besides calling tools: operators approve, admins administer."""

    AGENT = "agent"
    OPERATOR = "operator"
    ADMIN = "admin"

    def includes(self, other: Role) -> bool:
        """True when this role may do everything `other` may (admin ⊃ operator ⊃ agent)."""
        order = list(Role)
        return order.index(self) >= order.index(other)

"""Permission levels, ordered, and the one place queue names are derived from."""

from __future__ import annotations

from enum import StrEnum


class PermissionLevel(StrEnum):
    """What a tool may touch; an agent's ceiling is one of these too."""

    READ_ONLY = "read_only"
    READ_WRITE = "read_write"
    EXECUTE = "execute"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """Position in the order read_only < read_write < execute < admin."""
        return _ORDER.index(self)

    @property
    def queue_name(self) -> str:
        """The broker queue whose workers run tools of this level."""
        return f"tools.{self.value}"

    def machine_queue(self, machine: str) -> str:
        """The queue of this level's workers on one machine (`Settings.machine_id`), for
        calls that need state kept there."""
        return f"{self.queue_name}@{machine}"

    def allows(self, needed: PermissionLevel) -> bool:
        """True when a ceiling of this level covers a tool that needs `needed`."""
        return needed.rank <= self.rank


_ORDER = list(PermissionLevel)
# The queue of the Task tool's calls: each waits for the calls of its sub-agent, so it
# must never hold the worker those calls need (`toolrun worker --delegation`).
DELEGATION_QUEUE = "tools.delegation"
DELEGATION_ROLE = "delegation"  # the name of the worker serving it
QUEUES = (*(level.queue_name for level in PermissionLevel), DELEGATION_QUEUE)

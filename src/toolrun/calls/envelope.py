"""A call as the lifecycle admitted it: every decision made once, carried to the worker.

The envelope is the Celery message's only argument. A worker reads the facts from it
(the resolved tool version, who approved it, when it was queued, its time limit) instead
of working them out again. It does not trust the message: it checks that its own level
may run the tool, and that the arguments are the call's, valid, with their defaults.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolrun.permissions.policy import Policy, Risk
from toolrun.tools.model import ToolCall
from toolrun.tools.semver import Version


class Priority(StrEnum):
    """How soon a call is wanted: an agent waits for it, or it is work that can wait (DAG
    nodes, calls marked batch), served after interactive calls (`calls.fairness`)."""

    INTERACTIVE = "interactive"
    BATCH = "batch"


class Envelope(BaseModel):
    """One admitted call; `call.version` is the exact version it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: ToolCall
    arguments: dict[str, Any]  # the call's arguments with the schema's defaults applied
    queue: str
    policy: Policy
    risk: Risk
    warning: str
    approved_by: str | None = None  # an operator, "rule <id>" or "auto_approve"
    queued_at: float = 0.0  # set when it is queued (or queued again, once approved)
    time_limit_s: float = Field(gt=0)  # the tool's own limit, shortened by a node's timeout
    trace: dict[str, str] = Field(default_factory=dict)  # W3C trace context, when given
    priority: Priority = Priority.INTERACTIVE
    # What settling the call without its tool at hand needs (a reaper, a hard time limit):
    # whether running it twice is safe, and which arguments are secrets (never stored).
    repeat_safe: bool = False
    secrets: list[str] = Field(default_factory=list)

    @field_validator("call")
    @classmethod
    def _exact_version(cls, call: ToolCall) -> ToolCall:
        """The lifecycle resolved a version range or a pin to one version."""
        if call.version is None:
            raise ValueError("an admitted call names its exact tool version")
        Version.parse(call.version)  # ValueError: not one version
        return call

    @property
    def needs_approval(self) -> bool:
        """True while nobody has approved a call its policy holds back."""
        return self.policy is not Policy.SAFE and self.approved_by is None

    @property
    def agent_id(self) -> str | None:
        return self.call.agent_id

    def redaction(self) -> dict[str, Any]:
        """A schema marking the secret arguments (``writeOnly``), for `history.redact`."""
        return {"properties": {name: {"writeOnly": True} for name in self.secrets}}

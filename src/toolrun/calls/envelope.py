"""A call as the lifecycle admitted it: every decision made once, carried to the worker.

The envelope is the Celery message's only argument. A worker reads the facts from it
(the resolved tool version, the arguments with their defaults, who approved it, when it
was queued) instead of working them out again; it still checks that its own level may run
the tool, never trusting `level`, which is only what the API saw.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Policy, Risk
from toolrun.tools.model import ToolCall


class Envelope(BaseModel):
    """One admitted call; `call.version` is the exact version it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: ToolCall
    arguments: dict[str, Any]  # the call's arguments with the schema's defaults applied
    level: PermissionLevel
    queue: str
    policy: Policy
    risk: Risk
    warning: str
    approved_by: str | None = None  # an operator, "rule <id>" or "auto_approve"
    queued_at: float = 0.0  # set when it is queued (or queued again, once approved)
    time_limit_s: float = Field(gt=0)  # the tool's own limit, shortened by a node's timeout
    trace: dict[str, str] = Field(default_factory=dict)  # W3C trace context, when given

    @property
    def needs_approval(self) -> bool:
        """True while nobody has approved a call its policy holds back."""
        return self.policy is not Policy.SAFE and self.approved_by is None

    @property
    def agent_id(self) -> str | None:
        return self.call.agent_id

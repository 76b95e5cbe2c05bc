"""Approvers decide whether a call that needs confirmation may run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from rich.console import Console
from rich.markup import escape
from rich.prompt import Confirm

from toolrun.permissions.policy import Policy


@dataclass(frozen=True)
class ApprovalRequest:
    """What a human is asked to approve: one call, its arguments and why it is risky."""

    call_id: str
    tool_name: str
    tool_version: str
    arguments: dict[str, Any]
    warning: str
    risk: str
    policy: Policy = Policy.CONFIRM


@dataclass(frozen=True)
class Decision:
    """An approver's answer; `reason` is shown to the caller when denied."""

    approved: bool
    reason: str = ""


class Approver(Protocol):
    """Asks someone (or something) whether a call may run."""

    def decide(self, request: ApprovalRequest) -> Decision: ...


@dataclass(frozen=True)
class AutoApprover:
    """Approves in advance: confirm calls (the CLI's ``--yes``), dangerous ones only when
    `dangerous` is set (``--allow-dangerous``, or a call an operator already approved)."""

    dangerous: bool = False

    def decide(self, request: ApprovalRequest) -> Decision:
        if request.policy is Policy.DANGEROUS and not self.dangerous:
            return Decision(
                approved=False,
                reason="the call is dangerous; pass --allow-dangerous to authorise it",
            )
        return Decision(approved=True, reason="approved in advance")


@dataclass(frozen=True)
class DenyApprover:
    """Denies everything: the answer when no human can be asked."""

    reason: str = (
        "needs confirmation but nobody can be asked (not interactive); pass --yes to approve"
    )

    def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(approved=False, reason=self.reason)


@dataclass
class TtyApprover:
    """Asks y/N on a terminal; anything but yes is a denial."""

    stream: TextIO | None = None  # None reads the console itself, so Enter takes the default
    console: Console = field(default_factory=lambda: Console(stderr=True))

    def decide(self, request: ApprovalRequest) -> Decision:
        self.console.print(
            f"[bold yellow]{escape(request.tool_name)}[/] {escape(request.tool_version)} "
            f"(risk {escape(request.risk)}, policy {request.policy}) needs confirmation: "
            f"{escape(request.warning)}"
        )
        self.console.print_json(data=request.arguments)
        approved = Confirm.ask("Run it?", default=False, console=self.console, stream=self.stream)
        return Decision(approved=approved, reason="" if approved else "denied at the prompt")


def default_approver(
    *, assume_yes: bool, interactive: bool, allow_dangerous: bool = False
) -> Approver:
    """The approver the CLI uses: --yes approves, a TTY asks, anything else denies."""
    if assume_yes or allow_dangerous:
        return AutoApprover(dangerous=allow_dangerous)
    return TtyApprover() if interactive else DenyApprover()

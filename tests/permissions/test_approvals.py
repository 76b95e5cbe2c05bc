"""Approvers: approve everything, deny everything, or ask on a terminal."""

from __future__ import annotations

import dataclasses
from io import StringIO

import pytest
from rich.console import Console

from toolrun.permissions.approvals import (
    ApprovalRequest,
    Approver,
    AutoApprover,
    Decision,
    DenyApprover,
    TtyApprover,
    default_approver,
)
from toolrun.permissions.policy import Policy


def _request(command: str = "rm -rf build") -> ApprovalRequest:
    return ApprovalRequest(
        call_id="c1",
        tool_name="bash",
        tool_version="1.0.0",
        arguments={"command": command, "timeout": 10},
        warning=f"bash runs a shell command: {command}",
        risk="high",
    )


def _ask(answer: str, request: ApprovalRequest | None = None) -> tuple[Decision, str]:
    screen = StringIO()
    approver = TtyApprover(stream=StringIO(answer), console=Console(file=screen, width=200))
    decision = approver.decide(request or _request())
    return decision, screen.getvalue()


def test_auto_approver_approves_confirm_calls() -> None:
    decision = AutoApprover().decide(_request())

    assert decision.approved


def test_auto_approver_refuses_dangerous_calls_unless_told() -> None:
    dangerous = dataclasses.replace(_request(), policy=Policy.DANGEROUS)

    refused = AutoApprover().decide(dangerous)

    assert not refused.approved
    assert "--allow-dangerous" in refused.reason
    assert AutoApprover(dangerous=True).decide(dangerous).approved


def test_deny_approver_denies_and_says_how_to_approve() -> None:
    decision = DenyApprover().decide(_request())

    assert not decision.approved
    assert decision.reason == (
        "needs confirmation but nobody can be asked (not interactive); pass --yes to approve"
    )


@pytest.mark.parametrize("answer", ["y\n", "Y\n", "y"])
def test_tty_approver_yes(answer: str) -> None:
    decision, _ = _ask(answer)

    assert decision == Decision(approved=True, reason="")


@pytest.mark.parametrize("answer", ["n\n", "N\n", "", "maybe\n"])
def test_tty_approver_anything_else_is_no(answer: str) -> None:
    decision, _ = _ask(answer)

    assert decision == Decision(approved=False, reason="denied at the prompt")


def test_tty_approver_shows_the_call() -> None:
    _, shown = _ask("n\n")

    assert (
        "bash 1.0.0 (risk high, policy confirm) needs confirmation: "
        "bash runs a shell command: rm -rf build" in (shown)
    )
    assert '"command": "rm -rf build"' in shown
    assert '"timeout": 10' in shown
    assert "Run it?" in shown


@pytest.mark.parametrize("command", ["echo [/]", "echo [red]x[/red]", "ls [bold]"])
def test_tty_approver_shows_brackets_literally(command: str) -> None:
    # The human must see the exact command; rich markup in it must not vanish or crash.
    decision, shown = _ask("n\n", _request(command))

    assert not decision.approved
    assert f"needs confirmation: bash runs a shell command: {command}" in shown


@pytest.mark.parametrize(
    ("assume_yes", "interactive", "kind"),
    [
        (True, True, AutoApprover),
        (True, False, AutoApprover),
        (False, True, TtyApprover),
        (False, False, DenyApprover),
    ],
)
def test_default_approver(assume_yes: bool, interactive: bool, kind: type[Approver]) -> None:
    approver = default_approver(assume_yes=assume_yes, interactive=interactive)

    assert type(approver) is kind


def test_decision_and_request_are_frozen() -> None:
    assert Decision(approved=False).reason == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        _request().warning = "other"  # type: ignore[misc]

"""Policy levels: risk mapped by configuration, tool floors, requires_confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.permissions.policy import Policy, Risk
from toolrun.tools import ToolContext, ToolRegistry


def verdict_of(settings: Settings, tool: str, **arguments: object) -> tuple[Policy, Risk]:
    found = ToolRegistry.with_builtins().get(tool)
    assert found is not None
    verdict = found.verdict(dict(arguments), ToolContext.create(settings))
    return verdict.policy, verdict.risk


@pytest.mark.parametrize(
    ("command", "policy", "risk"),
    [
        ("ls -la", Policy.SAFE, Risk.LOW),
        ("git status && echo done", Policy.SAFE, Risk.LOW),
        ("rm notes.txt", Policy.CONFIRM, Risk.MEDIUM),
        ("git push origin main", Policy.CONFIRM, Risk.MEDIUM),
        ("rm -rf build", Policy.DANGEROUS, Risk.HIGH),
        ("git push --force", Policy.DANGEROUS, Risk.HIGH),
    ],
)
def test_bash_risk_maps_to_the_default_policy(
    workspace: Path, command: str, policy: Policy, risk: Risk
) -> None:
    settings = Settings(workspace=workspace)

    assert verdict_of(settings, "bash", command=command) == (policy, risk)


def test_the_mapping_is_configurable(workspace: Path) -> None:
    settings = Settings(workspace=workspace, risk_policy={"low": "confirm", "high": "confirm"})

    assert verdict_of(settings, "bash", command="ls")[0] is Policy.CONFIRM
    assert verdict_of(settings, "bash", command="rm -rf x")[0] is Policy.CONFIRM
    assert verdict_of(settings, "bash", command="rm x")[0] is Policy.CONFIRM


def test_a_tool_floor_raises_every_call(workspace: Path) -> None:
    settings = Settings(workspace=workspace, tool_policies={"read": "confirm"})

    assert verdict_of(settings, "read", file_path="a")[0] is Policy.CONFIRM
    assert verdict_of(settings, "glob", pattern="*")[0] is Policy.SAFE


def test_write_confirms_only_over_an_existing_file(workspace: Path) -> None:
    settings = Settings(workspace=workspace)
    (workspace / "old.txt").write_text("x")

    assert verdict_of(settings, "write", file_path="new.txt", content="") == (
        Policy.SAFE,
        Risk.LOW,
    )
    assert verdict_of(settings, "write", file_path="old.txt", content="") == (
        Policy.CONFIRM,
        Risk.MEDIUM,
    )


def test_without_the_allowlist_no_command_is_safe(workspace: Path) -> None:
    settings = Settings(workspace=workspace, command_allowlist=None)

    assert verdict_of(settings, "bash", command="ls") == (Policy.CONFIRM, Risk.MEDIUM)


def test_a_bad_policy_setting_is_refused(workspace: Path) -> None:
    with pytest.raises(ValueError, match="risk_policy"):
        Settings(workspace=workspace, risk_policy={"low": "yolo"})  # type: ignore[dict-item]


def test_a_write_outside_the_workspace_is_blocked_or_dangerous(workspace: Path) -> None:
    command = "echo x > /etc/passwd"
    with pytest.raises(SandboxViolation, match="redirect outside the workspace"):
        verdict_of(Settings(workspace=workspace), "bash", command=command)

    unchecked = Settings(workspace=workspace, command_allowlist=None)
    assert verdict_of(unchecked, "bash", command=command) == (Policy.DANGEROUS, Risk.HIGH)

"""Who a sub-agent is: its profile narrows the caller's, and follows the caller's fate."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Engine

from toolrun.errors import ToolExecutionError
from toolrun.permissions.agents import AgentProfile, AgentStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.subagents.definition import SubAgent
from toolrun.subagents.delegation import PlatformDelegation
from toolrun.subagents.loop import delegated_profile
from toolrun.tools import ToolRegistry
from toolrun.tools.model import ToolDescriptor
from toolrun.tools.semver import VersionRange

TOOLS = [tool.descriptor for tool in ToolRegistry.with_builtins().list()]


def sub_agent(**fields: Any) -> SubAgent:
    return SubAgent.model_validate({"name": "helper", "description": "d", "prompt": "p", **fields})


def parent(**fields: Any) -> AgentProfile:
    values: dict[str, Any] = {
        "id": "p1",
        "name": "lead",
        "role": Role.ADMIN,
        "ceiling": PermissionLevel.ADMIN,
    }
    return AgentProfile(**(values | fields))


def names(profile: AgentProfile) -> set[str]:
    return set(profile.tools or ())


def by_name(name: str) -> ToolDescriptor:
    return next(d for d in TOOLS if d.name == name)


@pytest.mark.parametrize(
    ("own", "callers", "effective"),
    [
        (PermissionLevel.EXECUTE, PermissionLevel.READ_ONLY, PermissionLevel.READ_ONLY),
        (PermissionLevel.READ_ONLY, PermissionLevel.EXECUTE, PermissionLevel.READ_ONLY),
        (PermissionLevel.READ_WRITE, PermissionLevel.READ_WRITE, PermissionLevel.READ_WRITE),
    ],
)
def test_the_ceiling_is_the_lower_of_the_two(
    own: PermissionLevel, callers: PermissionLevel, effective: PermissionLevel
) -> None:
    profile = delegated_profile(sub_agent(ceiling=own), parent(ceiling=callers), TOOLS)

    assert profile.ceiling is effective
    assert all(by_name(name).permission.rank <= effective.rank for name in names(profile))


def test_the_tools_are_both_filters_at_once() -> None:
    caller = parent(tools=frozenset({"read", "grep", "tag:git"}))
    own = sub_agent(tools=["read", "glob", "git_status", "git_commit"], ceiling="admin")

    profile = delegated_profile(own, caller, TOOLS)

    assert names(profile) == {"read", "git_status", "git_commit"}


def test_it_acts_for_the_caller_who_keeps_its_pins_and_a_sub_agent_is_never_an_admin() -> None:
    caller = parent(pins=(("grep", VersionRange.parse("^1")),))

    profile = delegated_profile(sub_agent(), caller, TOOLS)

    assert (profile.id, profile.name, profile.role) == ("p1", "lead/helper", Role.AGENT)
    assert profile.pins == caller.pins


def test_a_local_run_has_no_caller_to_narrow_it() -> None:
    profile = delegated_profile(sub_agent(ceiling="execute"), None, TOOLS)

    assert (profile.id, profile.ceiling) == ("local", PermissionLevel.EXECUTE)
    assert "bash" in names(profile)
    assert "task" not in names(profile)


def test_a_revoked_caller_stops_its_sub_agent(engine: Engine) -> None:
    agents = AgentStore(engine)
    profile, _token = agents.create("lead", ceiling=PermissionLevel.READ_ONLY)
    delegation = PlatformDelegation(
        ToolRegistry.with_builtins(),
        None,
        lifecycle=None,  # type: ignore[arg-type]  # parent() does not use it
        agents=agents,
    )

    assert delegation.parent(profile.id) == profile
    agents.revoke("lead")
    with pytest.raises(ToolExecutionError, match=f"agent {profile.id} was revoked"):
        delegation.parent(profile.id)

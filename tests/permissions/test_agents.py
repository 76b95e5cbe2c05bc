"""Agent profiles: tokens stored hashed, names unique, pins checked, ceilings enforced."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from toolrun.database import open_database
from toolrun.permissions.agents import AgentError, AgentStore, TokenCache, hash_token
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.tools import ToolRegistry


@pytest.fixture
def store(tmp_path: Path) -> AgentStore:
    return AgentStore(open_database(f"sqlite:///{tmp_path / 'agents.db'}"))


def test_the_token_is_returned_once_and_stored_hashed(store: AgentStore) -> None:
    profile, token = store.create("explore", ceiling=PermissionLevel.READ_ONLY)

    with store.engine.connect() as connection:
        rows = connection.execute(text("SELECT * FROM agents")).all()
    assert token.startswith("trk_")
    assert len(token) > 40
    assert all(token not in str(row) for row in rows)
    assert rows[0].token_hash == hash_token(token)
    assert store.authenticate(token) == profile
    assert store.authenticate(token + "x") is None


def test_names_are_unique_and_checked(store: AgentStore) -> None:
    store.create("dup", ceiling=PermissionLevel.READ_ONLY)

    with pytest.raises(AgentError, match="already exists"):
        store.create("dup", ceiling=PermissionLevel.ADMIN)
    for bad in ["", "Has Space", "../x", "x" * 65]:
        with pytest.raises(AgentError, match="agent name"):
            store.create(bad, ceiling=PermissionLevel.READ_ONLY)


@pytest.mark.parametrize("pin", ["grep", "grep@", "@^1", "grep@banana", "grep@^x.1"])
def test_bad_pins_are_refused(store: AgentStore, pin: str) -> None:
    with pytest.raises(AgentError, match="version pin"):
        store.create("pinned", ceiling=PermissionLevel.READ_ONLY, pins=[pin])


def test_revoked_tokens_stop_working_and_free_the_name(store: AgentStore) -> None:
    _profile, token = store.create("gone", ceiling=PermissionLevel.READ_ONLY)

    assert store.revoke("gone")
    assert store.authenticate(token) is None
    assert not store.revoke("gone")
    store.create("gone", ceiling=PermissionLevel.READ_ONLY)


def test_rotation_replaces_the_token(store: AgentStore) -> None:
    _profile, old = store.create("rotated", ceiling=PermissionLevel.READ_ONLY)

    new = store.rotate("rotated")

    assert store.authenticate(old) is None
    assert store.authenticate(new) is not None


def test_the_cache_answers_without_the_database_until_it_expires(store: AgentStore) -> None:
    _profile, token = store.create("cached", ceiling=PermissionLevel.READ_ONLY)
    cache = TokenCache(store, ttl_s=60)

    assert cache.cached(token) is None
    assert cache.authenticate(token) is not None
    store.revoke("cached")
    assert cache.cached(token) is not None  # within the TTL, by design
    cache.forget("cached")
    assert cache.authenticate(token) is None


@pytest.mark.parametrize(
    ("tools", "pins", "tool", "refusal"),
    [
        (None, [], "write", "agent may not call this tool (needs read_write, has read_only)"),
        (["read"], [], "grep", "tool grep is not in the tool set of agent a"),
        (["search"], [], "grep", "tool grep is not in the tool set of agent a"),
        (["tag:search"], [], "grep", None),
        (None, ["read@^2"], "read", "agent a is pinned to read@^2"),
        (None, ["read@~1.0"], "read", None),
        (None, [], "read", None),
    ],
)
def test_refusals(
    store: AgentStore, tools: list[str] | None, pins: list[str], tool: str, refusal: str | None
) -> None:
    profile, _token = store.create(
        "a", ceiling=PermissionLevel.READ_ONLY, tools=tools, pins=pins, role=Role.AGENT
    )
    found = ToolRegistry.with_builtins().get(tool)
    assert found is not None

    assert profile.refusal(found.descriptor) == refusal


def test_roles_include_lower_roles() -> None:
    assert Role.ADMIN.includes(Role.OPERATOR)
    assert Role.OPERATOR.includes(Role.AGENT)
    assert not Role.AGENT.includes(Role.OPERATOR)
    assert not Role.OPERATOR.includes(Role.ADMIN)

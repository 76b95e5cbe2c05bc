"""Permission levels: their order, ceilings and queue names."""

from __future__ import annotations

import itertools

import pytest

from toolrun.permissions.levels import PermissionLevel

ORDER = [
    PermissionLevel.READ_ONLY,
    PermissionLevel.READ_WRITE,
    PermissionLevel.EXECUTE,
    PermissionLevel.ADMIN,
]


def test_levels_are_ordered() -> None:
    assert list(PermissionLevel) == ORDER
    assert [level.rank for level in ORDER] == [0, 1, 2, 3]


def test_levels_are_strings() -> None:
    assert [str(level) for level in ORDER] == ["read_only", "read_write", "execute", "admin"]
    assert PermissionLevel("execute") is PermissionLevel.EXECUTE
    with pytest.raises(ValueError, match="root"):
        PermissionLevel("root")


@pytest.mark.parametrize(
    ("level", "queue"),
    [
        (PermissionLevel.READ_ONLY, "tools.read_only"),
        (PermissionLevel.READ_WRITE, "tools.read_write"),
        (PermissionLevel.EXECUTE, "tools.execute"),
        (PermissionLevel.ADMIN, "tools.admin"),
    ],
)
def test_queue_names(level: PermissionLevel, queue: str) -> None:
    assert level.queue_name == queue


def test_queue_names_are_unique() -> None:
    assert len({level.queue_name for level in PermissionLevel}) == 4


@pytest.mark.parametrize(("ceiling", "needed"), list(itertools.product(ORDER, ORDER)))
def test_a_ceiling_allows_its_level_and_below(
    ceiling: PermissionLevel, needed: PermissionLevel
) -> None:
    assert ceiling.allows(needed) is (ORDER.index(needed) <= ORDER.index(ceiling))


def test_allows_examples() -> None:
    assert PermissionLevel.ADMIN.allows(PermissionLevel.EXECUTE)
    assert PermissionLevel.EXECUTE.allows(PermissionLevel.READ_WRITE)
    assert not PermissionLevel.EXECUTE.allows(PermissionLevel.ADMIN)
    assert PermissionLevel.READ_ONLY.allows(PermissionLevel.READ_ONLY)
    assert not PermissionLevel.READ_ONLY.allows(PermissionLevel.READ_WRITE)

"""The registry: built-ins, versions side by side, unregister and filter."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import BUILTINS

from toolrun.errors import DuplicateTool, ToolNotFound, ToolrunError
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools import Tool, ToolContext, ToolDescriptor, ToolExample, ToolOutput, ToolRegistry
from toolrun.tools.builtin.read import ReadTool


def _descriptor(name: str, version: str) -> ToolDescriptor:
    return ToolDescriptor(
        name=name,
        version=version,
        description="Echo the text back.",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        returns={"type": "object", "properties": {"text": {"type": "string"}}},
        examples=[
            ToolExample(description="a word", arguments={"text": "hello"}),
            ToolExample(description="nothing", arguments={"text": ""}),
            ToolExample(description="a line", arguments={"text": "a b c"}),
        ],
        permission=PermissionLevel.READ_ONLY,
    )


class EchoTool(Tool):
    def __init__(self, name: str = "echo", version: str = "1.0.0") -> None:
        self.descriptor = _descriptor(name, version)
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(output={"text": arguments["text"]})


def _versions(registry: ToolRegistry, name: str) -> list[str]:
    return [t.descriptor.version for t in registry.list() if t.descriptor.name == name]


def test_builtins_are_registered_on_creation(registry: ToolRegistry) -> None:
    assert len(registry) == len(BUILTINS)
    assert registry.names() == BUILTINS
    for name in BUILTINS:
        assert name in registry
        tool = registry.get(name)
        assert tool is not None
        assert tool.descriptor.name == name


def test_each_builtin_registry_gets_fresh_instances() -> None:
    first, second = ToolRegistry.with_builtins(), ToolRegistry.with_builtins()

    assert first.get("read") is not second.get("read")


def test_an_empty_registry() -> None:
    registry = ToolRegistry()

    assert len(registry) == 0
    assert registry.list() == []
    assert registry.names() == []
    assert registry.get("read") is None


def test_register_returns_the_tool_id() -> None:
    registry = ToolRegistry()

    assert registry.register(EchoTool()) == "echo@1.0.0"
    assert "echo" in registry
    assert "echo@1.0.0" not in registry


def test_duplicate_name_and_version_is_rejected() -> None:
    original = EchoTool()
    registry = ToolRegistry([original])

    with pytest.raises(DuplicateTool, match=r"^tool echo@1\.0\.0 is already registered$") as info:
        registry.register(EchoTool())

    assert isinstance(info.value, ToolrunError)
    assert len(registry) == 1
    assert registry.get("echo") is original


def test_duplicate_builtin_is_rejected(registry: ToolRegistry) -> None:
    with pytest.raises(DuplicateTool, match=r"read@1\.0\.0"):
        registry.register(ReadTool())

    assert len(registry) == len(BUILTINS)


def test_duplicates_in_the_constructor_are_rejected() -> None:
    with pytest.raises(DuplicateTool):
        ToolRegistry([EchoTool(), EchoTool()])


def test_versions_live_side_by_side_and_the_newest_wins() -> None:
    registry = ToolRegistry([EchoTool(version=v) for v in ["1.2.0", "1.10.0", "1.0.0"]])

    newest = registry.get("echo")

    assert len(registry) == 3
    assert registry.names() == ["echo"]
    assert newest is not None
    assert newest.descriptor.version == "1.10.0"


def test_a_release_outranks_its_prerelease() -> None:
    registry = ToolRegistry([EchoTool(version="2.0.0"), EchoTool(version="2.0.0-rc.1")])

    newest = registry.get("echo")

    assert newest is not None
    assert newest.descriptor.version == "2.0.0"


def test_get_with_a_version_returns_that_exact_version() -> None:
    tools = {v: EchoTool(version=v) for v in ["1.0.0", "1.2.0", "2.0.0"]}
    registry = ToolRegistry(tools.values())

    for version, tool in tools.items():
        assert registry.get("echo", version) is tool


@pytest.mark.parametrize(
    ("name", "version"),
    [("nope", None), ("nope", "1.0.0"), ("echo", "3.0.0"), ("echo", "9.9"), ("echo", "latest")],
)
def test_get_of_an_unknown_name_or_version_is_none(name: str, version: str | None) -> None:
    registry = ToolRegistry([EchoTool(version="1.0.0"), EchoTool(version="2.0.0")])

    assert registry.get(name, version) is None


def test_list_is_ordered_by_name_then_version() -> None:
    registry = ToolRegistry(
        [
            EchoTool("zzz", "1.0.0"),
            EchoTool("aaa", "1.10.0"),
            EchoTool("aaa", "1.2.0"),
            EchoTool("aaa", "1.2.0-beta"),
            EchoTool("read", "0.9.0"),
            EchoTool("read", "1.0.0"),
            EchoTool("bash", "1.0.0"),
        ]
    )

    ids = [tool.descriptor.tool_id for tool in registry.list()]

    assert ids == [
        "aaa@1.2.0-beta",
        "aaa@1.2.0",
        "aaa@1.10.0",
        "bash@1.0.0",
        "read@0.9.0",
        "read@1.0.0",
        "zzz@1.0.0",
    ]


def test_unregister_removes_one_version() -> None:
    registry = ToolRegistry([EchoTool(version=v) for v in ["1.0.0", "2.0.0"]])

    registry.unregister("echo@2.0.0")

    assert _versions(registry, "echo") == ["1.0.0"]
    assert registry.get("echo", "2.0.0") is None
    newest = registry.get("echo")
    assert newest is not None
    assert newest.descriptor.version == "1.0.0"


def test_unregistering_the_last_version_removes_the_name() -> None:
    registry = ToolRegistry([EchoTool()])

    registry.unregister("echo@1.0.0")

    assert "echo" not in registry
    assert registry.names() == []
    assert registry.get("echo") is None
    assert len(registry) == 0


def test_unregister_a_builtin_and_register_it_again(registry: ToolRegistry) -> None:
    registry.unregister("bash@1.0.0")

    assert registry.names() == BUILTINS[1:]
    assert registry.register(EchoTool("bash", "1.0.0")) == "bash@1.0.0"
    assert len(registry) == len(BUILTINS)


@pytest.mark.parametrize("tool_id", ["nope@1.0.0", "echo@9.9.9", "echo", "echo@", "echo@latest"])
def test_unregister_of_an_unknown_id_raises_tool_not_found(tool_id: str) -> None:
    registry = ToolRegistry([EchoTool()])

    with pytest.raises(ToolNotFound, match=f"no tool with id {tool_id!r}"):
        registry.unregister(tool_id)

    assert len(registry) == 1


def test_filter_keeps_named_tools_and_ignores_unknown_names(registry: ToolRegistry) -> None:
    filtered = registry.filter(["read", "bash", "nope", "read"])

    assert filtered.names() == ["bash", "read"]
    assert filtered.get("read") is registry.get("read")
    assert registry.names() == BUILTINS


def test_filter_keeps_every_version() -> None:
    registry = ToolRegistry([EchoTool(version="1.0.0"), EchoTool(version="2.0.0"), EchoTool("x")])

    filtered = registry.filter(name for name in ["echo"])

    assert _versions(filtered, "echo") == ["1.0.0", "2.0.0"]
    assert "x" not in filtered


def test_filter_with_no_names_is_empty(registry: ToolRegistry) -> None:
    assert len(registry.filter([])) == 0
    assert len(registry.filter(["nope"])) == 0


def test_a_filtered_registry_is_independent(registry: ToolRegistry) -> None:
    filtered = registry.filter(["read"])

    filtered.register(EchoTool())
    registry.unregister("read@1.0.0")

    assert "echo" not in registry
    assert filtered.names() == ["echo", "read"]


def test_newest_release_is_preferred_over_a_higher_prerelease() -> None:
    registry = ToolRegistry([EchoTool(version="1.4.0"), EchoTool(version="2.0.0-beta.1")])

    found = registry.get("echo")

    assert found is not None
    assert found.descriptor.version == "1.4.0"
    beta = registry.get("echo", "2.0.0-beta.1")
    assert beta is not None
    assert beta.descriptor.version == "2.0.0-beta.1"


class _LoadedByAnotherThread(ToolRegistry):
    """A registry whose refresh finds the sources already loaded — by another thread that
    held the lock meanwhile — and so answers False, with the tool now there."""

    def refresh(self, *, within_s: float = 0.0) -> bool:
        if "echo" not in self.names():
            self.register(EchoTool())
        return False


def test_find_looks_again_after_a_refresh_another_thread_did() -> None:
    registry = _LoadedByAnotherThread()
    found = registry.find("echo", "1.0.0")
    assert found is not None
    assert found.descriptor.version == "1.0.0"

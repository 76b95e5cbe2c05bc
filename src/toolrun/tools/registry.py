"""The registry: tools by name and SemVer version, several versions side by side."""

from __future__ import annotations

import builtins
import difflib
from collections.abc import Callable, Iterable, Sequence

from toolrun.errors import DuplicateTool, ToolNotFound
from toolrun.tools.base import Tool
from toolrun.tools.builtin import builtin_tools
from toolrun.tools.model import ToolDescriptor
from toolrun.tools.semver import Version, VersionRange


class ToolRegistry:
    """Tools keyed by name, then version; ids are ``name@version``."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, dict[Version, Tool]] = {}
        for tool in tools:
            self.register(tool)

    @classmethod
    def with_builtins(cls) -> ToolRegistry:
        """A registry holding the built-in tools."""
        return cls(builtin_tools())

    def register(self, tool: Tool) -> str:
        """Add a tool; returns its id.

        Raises:
            DuplicateTool: the same name@version is already registered.
        """
        descriptor = tool.descriptor
        versions = self._tools.setdefault(descriptor.name, {})
        version = descriptor.semver
        if version in versions:
            raise DuplicateTool(f"tool {descriptor.tool_id} is already registered")
        versions[version] = tool
        return descriptor.tool_id

    def unregister(self, tool_id: str) -> None:
        """Remove ``name@version``.

        Raises:
            ToolNotFound: no such tool id.
        """
        name, _, version_text = tool_id.partition("@")
        versions = self._tools.get(name, {})
        try:
            del versions[Version.parse(version_text)]
        except (KeyError, ValueError) as exc:
            raise ToolNotFound(f"no tool with id {tool_id!r}") from exc
        if not versions:
            del self._tools[name]

    def get(self, name: str, version: str | None = None) -> Tool | None:
        """`name` at `version` (exact, or the newest in a range such as ``^1.2``), else its
        newest release (or pre-release when it has only those); None when absent."""
        versions = self._tools.get(name)
        if not versions:
            return None
        if version is None:
            releases = [v for v in versions if not v.prerelease]
            return versions[max(releases or versions)]
        try:
            return versions.get(Version.parse(version))
        except ValueError:
            pass
        try:
            wanted = VersionRange.parse(version)
        except ValueError:
            return None
        matching = [v for v in versions if wanted.matches(v)]
        return versions[max(matching)] if matching else None

    def refresh(self, *, within_s: float = 0.0) -> bool:
        """Load tool sources that change (plugins, MCP imports) again if they changed;
        True when something was loaded. Built-in tools never change: False."""
        return False

    def find(self, name: str, version: str | None = None) -> Tool | None:
        """`get`, and on a miss the changing sources loaded again once (`refresh`: I/O, so
        an explicit call for a tool the caller was told exists, never a getter's). Looked
        up again whatever `refresh` answers: another thread may have loaded the tool while
        this one waited for the registry's lock."""
        found = self.get(name, version)
        if found is None:
            self.refresh(within_s=0)
            found = self.get(name, version)
        return found

    def resolve(
        self,
        name: str,
        version: str | None = None,
        *,
        pin: VersionRange | None = None,
        visible: Callable[[ToolDescriptor], bool] | None = None,
    ) -> Tool:
        """The tool a call names: `version` (exact or a range) if given, else the caller's
        `pin`, else the newest release.

        Raises:
            ToolNotFound: nothing matches; the message names the tools the caller may see
                (`visible`; default: every tool).
        """
        wanted = version or (None if pin is None else str(pin))
        found = self.get(name, wanted)
        if found is None:
            raise self.unknown(name, wanted, visible)
        return found

    def unknown(
        self, name: str, version: str | None, visible: Callable[[ToolDescriptor], bool] | None
    ) -> ToolNotFound:
        """The error for a tool that is not here, naming those the caller may see."""
        shown = None
        if visible is not None:
            shown = [tool.descriptor.name for tool in self.list() if visible(tool.descriptor)]
        return ToolNotFound(self.missing(name, version, shown))

    def versions(self, name: str) -> builtins.list[Tool]:
        """Every registered version of `name`, oldest first (empty when unknown)."""
        versions = self._tools.get(name, {})
        return [versions[v] for v in sorted(versions)]

    def list(self) -> builtins.list[Tool]:
        """Every registered tool version, by name then version."""
        return [
            self._tools[name][v] for name in sorted(self._tools) for v in sorted(self._tools[name])
        ]

    def missing(
        self, name: str, version: str | None = None, available: Iterable[str] | None = None
    ) -> str:
        """The message for a tool that is not here, naming the ones that are (or only
        `available`: those the caller may see)."""
        wanted = name + (f"@{version}" if version else "")
        names = self.names() if available is None else sorted(set(available))
        return (
            f"unknown tool: {wanted}{_suggestion(name, names)}; "
            f"available tools: {', '.join(names) or '(none)'}"
        )

    def unknown_entries(self, entries: Iterable[str]) -> builtins.list[str]:
        """The entries of a tool set (tool names and ``tag:<tag>``) that name nothing
        here, each with a close name where there is one."""
        names = self.names()
        tags = {f"tag:{tag}" for tool in self.list() for tag in tool.descriptor.tags}
        return [
            entry + _suggestion(entry, sorted(tags) if entry.startswith("tag:") else names)
            for entry in dict.fromkeys(entries)
            if entry not in (tags if entry.startswith("tag:") else self._tools)
        ]

    def names(self) -> builtins.list[str]:
        return sorted(self._tools)

    def filter(self, names: Iterable[str]) -> ToolRegistry:
        """A registry with only the named tools (all their versions); unknown names ignored."""
        wanted = set(names)
        return ToolRegistry(tool for tool in self.list() if tool.descriptor.name in wanted)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return sum(len(versions) for versions in self._tools.values())


def _suggestion(name: str, known: Sequence[str]) -> str:
    """ " (did you mean X?)" for the known name closest to a misspelt `name`, else ""."""
    if name in known:
        return ""  # known by that name (another version was asked for)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""

"""What the Task tool needs from where it runs, so the core never imports the platform
that provides it (`subagents.delegation`: through the call lifecycle, or in this process)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolrun.permissions.agents import AgentProfile
    from toolrun.sandbox.paths import Workspace
    from toolrun.subagents.catalog import SubAgentCatalog
    from toolrun.tools.base import ToolContext
    from toolrun.tools.model import ToolCall, ToolDescriptor, ToolResult


class Delegating(Protocol):
    """The calling agent's profile, the tools and sub-agent definitions, and a way to run
    a sub-agent's calls."""

    def catalog(self, workspace: Workspace) -> SubAgentCatalog:
        """The sub-agent definitions a Task call in `workspace` may name."""

    def tools(self) -> list[ToolDescriptor]:
        """The newest version of every tool."""

    def parent(self, agent_id: str | None) -> AgentProfile | None:
        """The profile of the agent that made the Task call (None: a local run).

        Raises:
            ToolExecutionError: the agent was revoked.
        """

    def run(
        self, calls: list[ToolCall], agent: AgentProfile, deadline: float, ctx: ToolContext
    ) -> list[ToolResult]:
        """Run `calls` as `agent`, each to its end or until `deadline` (time.monotonic());
        one result per call, in order."""

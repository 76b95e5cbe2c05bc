"""What a Task call needs from where it runs: the calling agent's profile, the tools and
sub-agent definitions, and a way to run the sub-agent's calls.

On the platform (`PlatformDelegation`, in a delegation worker) each call goes through the
lifecycle of every call (`calls.lifecycle`): checked against the sub-agent's profile,
parked for approval where needed, queued for the workers of its level, recorded in the
history; then awaited. Locally (`LocalDelegation`, `toolrun call --local`) calls are
checked the same way and run in this process, asking the local approver.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from toolrun.calls.lifecycle import Admitted, CallIdTaken, Lifecycle
from toolrun.errors import InvalidArguments, ToolExecutionError, ToolNotFound
from toolrun.permissions.agents import AgentProfile, AgentStore
from toolrun.sandbox.paths import Workspace
from toolrun.subagents.catalog import SubAgentCatalog, SubAgentStore
from toolrun.tools.base import ToolContext
from toolrun.tools.executor import Executor
from toolrun.tools.model import ToolCall, ToolDescriptor, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry

OUT_OF_TIME = "the Task call that made this call ran out of time"
_POLL_S = 1.0  # how often a wait for a sub-agent's call looks at the clock


@dataclass
class Delegation(ABC):
    """The platform side of the Task tool."""

    registry: ToolRegistry
    store: SubAgentStore | None  # registered definitions; None: the workspace's only

    def catalog(self, workspace: Workspace) -> SubAgentCatalog:
        return SubAgentCatalog(self.store, workspace)

    def tools(self) -> list[ToolDescriptor]:
        """The newest version of every tool."""
        newest = {tool.descriptor.name: tool.descriptor for tool in self.registry.list()}
        return [newest[name] for name in sorted(newest)]

    @abstractmethod
    def parent(self, agent_id: str | None) -> AgentProfile | None:
        """The profile of the agent that made the Task call (None: a local run).

        Raises:
            ToolExecutionError: the agent was revoked.
        """

    @abstractmethod
    def run(
        self, calls: list[ToolCall], agent: AgentProfile, deadline: float, ctx: ToolContext
    ) -> list[ToolResult]:
        """Run `calls` as `agent` (concurrently where the platform can), each to its end or
        until `deadline` (time.monotonic()); one result per call, in order."""


@dataclass
class PlatformDelegation(Delegation):
    """Sub-agent calls through the lifecycle, awaited in the call store."""

    lifecycle: Lifecycle = field(kw_only=True)
    agents: AgentStore = field(kw_only=True)

    def tools(self) -> list[ToolDescriptor]:
        """The newest version of every tool, the plugins registered a moment ago too (the
        tool sources are checked once per Task call: an explicit refresh, not a getter's)."""
        self.registry.refresh(within_s=0)
        return super().tools()

    def parent(self, agent_id: str | None) -> AgentProfile | None:
        if agent_id is None:
            return None
        profile = self.agents.by_id(agent_id)
        if profile is None:
            raise ToolExecutionError(f"agent {agent_id} was revoked; the task stops")
        return profile

    def run(
        self, calls: list[ToolCall], agent: AgentProfile, deadline: float, ctx: ToolContext
    ) -> list[ToolResult]:
        results: dict[str, ToolResult] = {}
        sent: list[ToolCall] = []
        for call in calls:
            admitted = self._admitted(call, agent, max(1.0, deadline - time.monotonic()))
            if isinstance(admitted, ToolResult):
                results[call.id] = admitted
            else:
                sent.append(admitted.call)
        for call in sent:
            results[call.id] = self._awaited(call, deadline)
        return [results[call.id] for call in calls]

    def _admitted(
        self, call: ToolCall, agent: AgentProfile, limit_s: float
    ) -> Admitted | ToolResult:
        """The call decided on and sent, or how it ended at once (an unknown tool or invalid
        arguments are not runs, so nothing is recorded for them)."""
        try:
            decided = self.lifecycle.decide(call, agent, limit_s=limit_s)
            if isinstance(decided, Admitted):
                self.lifecycle.send(decided)
        except ToolNotFound as exc:
            return _ended(call, ToolStatus.ERROR, str(exc))
        except InvalidArguments as exc:
            return _ended(call, ToolStatus.ERROR, f"invalid arguments: {exc}")
        except CallIdTaken as exc:
            return _ended(call, ToolStatus.ERROR, str(exc))
        return decided

    def _awaited(self, call: ToolCall, deadline: float) -> ToolResult:
        """The call's final result; cancelled (or reported still running) at `deadline`."""
        calls = self.lifecycle.calls
        while (left := deadline - time.monotonic()) > 0:
            ended = calls.wait_final(call.id, min(_POLL_S, left))
            if ended is not None:
                return ended
        self.lifecycle.cancel(call.id, call.arguments, by="task", reason=OUT_OF_TIME)
        current = calls.get(call.id)
        if current is not None and current.final:
            return current
        return _ended(call, ToolStatus.TIMEOUT, f"still running when {OUT_OF_TIME}")


@dataclass
class LocalDelegation(Delegation):
    """Sub-agent calls run one after another in this process."""

    executor: Executor = field(kw_only=True)

    def parent(self, agent_id: str | None) -> AgentProfile | None:
        return None

    def run(
        self, calls: list[ToolCall], agent: AgentProfile, deadline: float, ctx: ToolContext
    ) -> list[ToolResult]:
        results = []
        for call in calls:
            pin = agent.pin(call.tool_name)
            try:
                tool = self.registry.resolve(
                    call.tool_name, call.version, pin=pin, visible=agent.sees
                )
            except ToolNotFound as exc:
                results.append(_ended(call, ToolStatus.ERROR, str(exc)))
                continue
            refusal = agent.refusal(tool.descriptor)
            if refusal is not None:
                results.append(_ended(call, ToolStatus.BLOCKED, refusal))
            else:
                pinned = call.model_copy(update={"version": tool.descriptor.version})
                results.append(self.executor.execute(pinned, ctx))
        return results


def _ended(call: ToolCall, status: ToolStatus, error: str) -> ToolResult:
    return ToolResult(
        call_id=call.id,
        tool_name=call.tool_name,
        tool_version=call.version,
        status=status,
        error=error,
    )

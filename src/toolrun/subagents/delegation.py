"""What a Task call needs from where it runs: the calling agent's profile, the tools and
sub-agent definitions, and a way to run the sub-agent's calls.

On the platform (`PlatformDelegation`, in a delegation worker) each call goes through the
same gate as a call sent to the API (`calls.gate`): checked against the sub-agent's
profile, parked for approval where needed, queued for the workers of its level, recorded in
the history; then awaited. Locally (`LocalDelegation`, `toolrun call --local`) calls are
checked the same way and run in this process, asking the local approver.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from toolrun.calls.gate import CallGate, Refused
from toolrun.errors import InvalidArguments, ToolExecutionError
from toolrun.permissions.agents import AgentProfile, AgentStore
from toolrun.sandbox.paths import Workspace
from toolrun.subagents.catalog import SubAgentCatalog, SubAgentStore
from toolrun.tools.base import Tool, ToolContext
from toolrun.tools.executor import Executor
from toolrun.tools.model import ToolCall, ToolDescriptor, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import validate_arguments

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

    def _resolved(self, call: ToolCall, agent: AgentProfile) -> Tool | ToolResult:
        """The tool a call names (the agent's pinned version) with valid arguments, or
        the error the model gets instead; neither is a run, so nothing is recorded."""
        pinned = agent.pin(call.tool_name)
        tool = self.registry.get(call.tool_name, None if pinned is None else str(pinned))
        if tool is None:
            visible = [d.name for d in self.tools() if agent.refusal(d) is None]
            missing = self.registry.missing(call.tool_name, available=visible)
            return _ended(call, ToolStatus.ERROR, missing)
        try:
            validate_arguments(tool.validator, call.arguments)
        except InvalidArguments as exc:
            return _ended(call, ToolStatus.ERROR, f"invalid arguments: {exc}")
        return tool


@dataclass
class PlatformDelegation(Delegation):
    """Sub-agent calls through the gate, awaited in the call store."""

    gate: CallGate = field(kw_only=True)
    agents: AgentStore = field(kw_only=True)

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
        for asked in calls:
            found = self._resolved(asked, agent)
            if isinstance(found, ToolResult):
                results[asked.id] = found
                continue
            call = asked.model_copy(update={"version": found.descriptor.version})
            checked = self.gate.check(found, call, agent, max(1.0, deadline - time.monotonic()))
            if isinstance(checked, Refused):
                results[call.id] = _ended(call, checked.status, checked.reason)
                continue
            self.gate.send(checked)
            sent.append(call)
        for call in sent:
            results[call.id] = self._awaited(call, deadline)
        return [results[call.id] for call in calls]

    def _awaited(self, call: ToolCall, deadline: float) -> ToolResult:
        """The call's final result; cancelled (or reported still running) at `deadline`."""
        while (left := deadline - time.monotonic()) > 0:
            ended = self.gate.calls.wait_final(call.id, min(_POLL_S, left))
            if ended is not None:
                return ended
        self.gate.cancel(call.id, call.arguments, by="task", reason=OUT_OF_TIME)
        [current] = self.gate.calls.get_many([call.id])
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
            found = self._resolved(call, agent)
            refusal = None if isinstance(found, ToolResult) else agent.refusal(found.descriptor)
            if isinstance(found, ToolResult):
                results.append(found)
            elif refusal is not None:
                results.append(_ended(call, ToolStatus.BLOCKED, f"blocked: {refusal}"))
            else:
                pinned = call.model_copy(update={"version": found.descriptor.version})
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

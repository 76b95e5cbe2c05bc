"""Turning a ready node into a call, through the lifecycle of every call
(`calls.lifecycle`). A node call is queued on its tool's queue, parked for approval, or
refused."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolrun.calls.envelope import Priority
from toolrun.calls.lifecycle import Admitted, CallIdTaken, Lifecycle
from toolrun.calls.store import CallStore
from toolrun.dag.plan import Node
from toolrun.dag.refs import BadReference, resolve
from toolrun.errors import InvalidArguments, ToolNotFound
from toolrun.permissions.agents import AgentProfile
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus

__all__ = ["Admitted", "NodeDispatcher", "Refused"]
UNNEEDED = "the plan's run no longer needs this call"


@dataclass(frozen=True)
class Refused:
    """A node call that cannot run; sending it again would not help."""

    reason: str


@dataclass
class NodeDispatcher:
    """Checks and sends node calls for the scheduler (synchronous, one thread)."""

    lifecycle: Lifecycle

    @property
    def calls(self) -> CallStore:
        return self.lifecycle.calls

    def caller(self, agent_id: str | None) -> AgentProfile | Refused | None:
        """The profile a run's calls are made as (looked up again for each round of
        dispatches, so a revoked agent's run stops); None for a run without an agent."""
        if agent_id is None:
            return None
        agent = self.lifecycle.agents.by_id(agent_id)
        return Refused(f"agent {agent_id} was revoked") if agent is None else agent

    def prepare(
        self,
        node: Node,
        call_id: str,
        agent: AgentProfile | None,
        outputs: Mapping[str, Any],
        timeout_s: float | None,
    ) -> Admitted | Refused:
        """Resolve the node's references and decide on the call it makes; only a refused
        call is recorded (as blocked) here."""
        try:
            arguments = resolve(node.arguments, outputs)
        except BadReference as exc:
            return Refused(str(exc))
        call = ToolCall(
            id=call_id,
            tool_name=node.tool,
            version=node.version,
            arguments=arguments,
            agent_id=None if agent is None else agent.id,
        )
        try:
            # A plan's nodes are batch work: after the calls agents wait for, never starved.
            decided = self.lifecycle.decide(call, agent, limit_s=timeout_s, priority=Priority.BATCH)
        except ToolNotFound as exc:
            return Refused(str(exc))
        except InvalidArguments as exc:
            return Refused(f"invalid arguments after references were resolved: {exc}")
        except CallIdTaken as exc:  # refused before a restart of the scheduler
            decided = exc.result
        if isinstance(decided, ToolResult):
            return Refused(_refusal(decided))
        return decided

    def send(self, admitted: Admitted) -> None:
        """Queue or park the call; nothing when it exists (a scheduler that restarted
        sends the calls it had decided on again)."""
        with contextlib.suppress(CallIdTaken):
            self.lifecycle.send(admitted)

    def cancel_unneeded(self, call_id: str, arguments: dict[str, Any]) -> None:
        """Cancel a node call the run no longer needs (see `Lifecycle.cancel`)."""
        self.lifecycle.cancel(call_id, arguments, by="scheduler", reason=UNNEEDED)


def _refusal(ended: ToolResult) -> str:
    error = ended.error or "no message"
    return f"blocked: {error}" if ended.status is ToolStatus.BLOCKED else error

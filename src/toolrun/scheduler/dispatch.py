"""Turning a ready node into a call, through the same checks as a call sent to the API
(`calls.gate`). A node call is queued on its tool's queue, parked for approval, or
refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolrun.calls.gate import CallGate, Prepared, Refused
from toolrun.dag.plan import Node
from toolrun.dag.refs import BadReference, resolve
from toolrun.dag.validation import chosen_tool
from toolrun.errors import InvalidArguments
from toolrun.permissions.agents import AgentProfile, AgentStore
from toolrun.tools.model import ToolCall
from toolrun.tools.validation import validate_arguments

__all__ = ["NodeDispatcher", "Prepared", "Refused"]
UNNEEDED = "the plan's run no longer needs this call"


@dataclass
class NodeDispatcher(CallGate):
    """Checks and sends node calls for the scheduler (synchronous, one thread)."""

    agents: AgentStore

    def caller(self, agent_id: str | None) -> AgentProfile | Refused | None:
        """The profile a run's calls are made as (looked up again for each round of
        dispatches, so a revoked agent's run stops); None for a run without an agent."""
        if agent_id is None:
            return None
        agent = self.agents.by_id(agent_id)
        return Refused(f"agent {agent_id} was revoked") if agent is None else agent

    def prepare(
        self,
        node: Node,
        call_id: str,
        agent: AgentProfile | None,
        outputs: Mapping[str, Any],
        timeout_s: float | None,
    ) -> Prepared | Refused:
        """Resolve the node's references and check the call it makes; only a refused call
        is recorded (as blocked) here."""
        tool = chosen_tool(self.registry, node, agent)
        if tool is None:
            return Refused(self.registry.missing(node.tool, node.version))
        try:
            arguments = resolve(node.arguments, outputs)
            validate_arguments(tool.validator, arguments)
        except BadReference as exc:
            return Refused(str(exc))
        except InvalidArguments as exc:
            return Refused(f"invalid arguments after references were resolved: {exc}")
        call = ToolCall(
            id=call_id,
            tool_name=tool.descriptor.name,
            version=tool.descriptor.version,
            arguments=arguments,
            agent_id=None if agent is None else agent.id,
        )
        return self.check(tool, call, agent, timeout_s)

    def cancel_unneeded(self, call_id: str, arguments: dict[str, Any]) -> None:
        """Cancel a node call the run no longer needs (see `CallGate.cancel`)."""
        self.cancel(call_id, arguments, by="scheduler", reason=UNNEEDED)

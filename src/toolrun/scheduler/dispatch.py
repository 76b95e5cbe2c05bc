"""Turning a ready node into a call, through the same checks as a call sent to the API:
the agent's ceiling, tool set and pins, the tool's schema, the sandbox, the approval
policy. A node call is queued on its level's queue, parked for approval, or refused."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from celery import Celery

from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.dag.plan import Node
from toolrun.dag.refs import BadReference, resolve
from toolrun.dag.validation import chosen_tool
from toolrun.errors import InvalidArguments, SandboxViolation
from toolrun.history import HistoryStore, record_of
from toolrun.permissions.agents import AgentProfile, AgentStore
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord
from toolrun.permissions.policy import Policy, Verdict
from toolrun.permissions.rules import RuleBook
from toolrun.permissions.security_log import EventKind, SecurityLog
from toolrun.tools.base import Tool, ToolContext
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import validate_arguments, with_defaults
from toolrun.workers.dispatch import enqueue

_UNNEEDED = "the plan's run no longer needs this call"


@dataclass(frozen=True)
class Prepared:
    """A node call that passed every check, with what sending it needs."""

    call: ToolCall
    tool: Tool
    verdict: Verdict
    timeout_s: float | None


@dataclass(frozen=True)
class Refused:
    """A node call that cannot run; retrying it would not help."""

    reason: str


@dataclass
class NodeDispatcher:
    """Checks and sends node calls for the scheduler (synchronous, one thread)."""

    settings: Settings
    registry: ToolRegistry
    celery: Celery
    calls: CallStore
    agents: AgentStore
    inbox: ApprovalInbox
    rules: RuleBook
    security: SecurityLog
    history: HistoryStore

    def __post_init__(self) -> None:
        self.context = ToolContext.create(self.settings)  # for the approval policy's checks

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
        refusal = None if agent is None else agent.refusal(tool.descriptor)
        if refusal is not None:
            return self.block(call, refusal)
        try:
            verdict = tool.verdict(
                with_defaults(tool.descriptor.parameters, arguments), self.context
            )
        except SandboxViolation as exc:
            return self.block(call, str(exc))
        return Prepared(call, tool, verdict, timeout_s)

    def block(self, call: ToolCall, reason: str) -> Refused:
        """End a call as blocked, as the API does: record, history row, security event."""
        result = ToolResult.accepted(call, ToolStatus.BLOCKED)
        result.error = reason
        if self.calls.create(result):
            self._remember(result, call.arguments)
            self.security.record(
                EventKind.BLOCKED_CALL,
                reason,
                agent_id=call.agent_id,
                call_id=call.id,
                tool_name=call.tool_name,
            )
        return Refused(f"blocked: {reason}")

    def send(self, prepared: Prepared) -> None:
        """Queue the call, or park it for approval; nothing when it exists (a scheduler
        that restarted sends the calls it had decided on again)."""
        call, verdict = prepared.call, prepared.verdict
        approved_by = None
        if verdict.needs_approval:
            approved_by = self._pre_approval(call, verdict)
            if approved_by is None:
                self._park(prepared)
                return
        queued = ToolResult.accepted(call, ToolStatus.QUEUED)
        if approved_by is not None:
            queued.metadata["approved_by"] = approved_by
        if not self.calls.create(queued):
            return
        tool = prepared.tool
        limit = tool.time_limit_s(
            with_defaults(tool.descriptor.parameters, call.arguments), self.settings
        )
        enqueue(
            self.celery,
            call,
            level=tool.descriptor.permission,
            parameters=tool.descriptor.parameters,
            tool_limit_s=min(limit, prepared.timeout_s or math.inf),
            kill_grace_s=self.settings.kill_grace_s,
            approved_by=approved_by,
            queued_at=queued.metadata["queued_at"],
        )

    def cancel(self, call_id: str, arguments: dict[str, Any]) -> None:
        """End a call that has not started as cancelled (a worker then skips it); one
        already running goes on, and its result is ignored. A parked call leaves the
        approval inbox first, so that nobody can approve it any more."""
        for result in self.calls.get_many([call_id]):
            if result is not None and result.status in (
                ToolStatus.QUEUED,
                ToolStatus.AWAITING_APPROVAL,
            ):
                if result.status is ToolStatus.AWAITING_APPROVAL:
                    self.inbox.decide(call_id, approved=False, by="scheduler", reason=_UNNEEDED)
                result.status = ToolStatus.CANCELLED
                result.error = _UNNEEDED
                self.calls.finish(result)
                self._remember(result, arguments)

    def _remember(self, result: ToolResult, arguments: dict[str, Any]) -> None:
        """The history row of a call the scheduler ended itself (blocked, cancelled)."""
        tool = self.registry.get(result.tool_name, result.tool_version)
        parameters = None if tool is None else tool.descriptor.parameters
        self.history.write(record_of(result, arguments, parameters))

    def _pre_approval(self, call: ToolCall, verdict: Verdict) -> str | None:
        if verdict.policy is Policy.CONFIRM and self.settings.auto_approve:
            return "auto_approve"
        rule = self.rules.first_match(call.tool_name, call.agent_id, call.arguments)
        return None if rule is None else f"rule {rule.id}"

    def _park(self, prepared: Prepared) -> None:
        """Put the call in the approval inbox, then record it as awaiting approval. In
        that order: a scheduler that dies in between finds no record, so it parks the call
        again (the inbox keeps its first entry); an operator cannot approve a call without
        a record (the API refuses), so nothing runs twice."""
        call, verdict = prepared.call, prepared.verdict
        agent = None if call.agent_id is None else self.agents.by_id(call.agent_id)
        name = None if agent is None else agent.name
        self.inbox.park(ApprovalRecord.parked(call, name, verdict, self.settings.approval_ttl_s))
        parked = ToolResult.accepted(
            call, ToolStatus.AWAITING_APPROVAL, policy=verdict.policy.value, risk=verdict.risk.value
        )
        if prepared.timeout_s is not None:  # the node's timeout, for the approved call
            parked.metadata["time_limit_s"] = prepared.timeout_s
        parked.error = verdict.warning
        self.calls.create(parked)

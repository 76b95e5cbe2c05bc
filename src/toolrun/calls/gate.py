"""The checks every call made by the platform itself goes through, as a call sent to the
API does: the agent's ceiling, tool set and pins, the sandbox, the approval policy. A
checked call is queued on its tool's queue, parked for approval, or refused (recorded as
blocked). Used by the DAG scheduler for node calls and by the Task tool for the calls of
a sub-agent; synchronous, for threads outside an event loop."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from celery import Celery

from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.history import HistoryStore, record_of
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord
from toolrun.permissions.policy import Policy, Verdict
from toolrun.permissions.rules import RuleBook
from toolrun.permissions.security_log import EventKind, SecurityLog
from toolrun.tools.base import Tool, ToolContext
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import with_defaults
from toolrun.workers.dispatch import enqueue
from toolrun.workers.presence import has_workers


@dataclass(frozen=True)
class Prepared:
    """A call that passed every check, with what sending it needs."""

    call: ToolCall
    tool: Tool
    verdict: Verdict
    timeout_s: float | None  # shortens the tool's own limit (a node's timeout)
    agent_name: str | None  # shown to operators when the call is parked


@dataclass(frozen=True)
class Refused:
    """A call that cannot run; sending it again would not help."""

    reason: str
    status: ToolStatus = ToolStatus.BLOCKED  # how it ended, where it was recorded


@dataclass
class CallGate:
    """Checks and sends calls on behalf of agents (synchronous, one thread at a time)."""

    settings: Settings
    registry: ToolRegistry
    celery: Celery
    calls: CallStore
    inbox: ApprovalInbox
    rules: RuleBook
    security: SecurityLog
    history: HistoryStore

    def __post_init__(self) -> None:
        self.context = ToolContext.create(self.settings)  # for the approval policy's checks

    def check(
        self, tool: Tool, call: ToolCall, agent: AgentProfile | None, timeout_s: float | None
    ) -> Prepared | Refused:
        """Check a call with valid arguments; only a refused call is recorded (as
        blocked) here."""
        refusal = None if agent is None else agent.refusal(tool.descriptor)
        if refusal is not None:
            return self.block(call, refusal)
        try:
            verdict = tool.verdict(
                with_defaults(tool.descriptor.parameters, call.arguments), self.context
            )
        except SandboxViolation as exc:
            return self.block(call, str(exc))
        machine = tool.machine(call.arguments)
        if machine is not None and not has_workers(
            self.calls.client, machine, tool.descriptor.permission
        ):
            return self.end_now(call, ToolStatus.ERROR, tool.stranded(call.arguments, machine))
        return Prepared(call, tool, verdict, timeout_s, None if agent is None else agent.name)

    def end_now(self, call: ToolCall, status: ToolStatus, error: str) -> Refused:
        """End a call before it is sent, as the API does: record, history row."""
        self._ended_now(call, status, error)
        return Refused(error, status)

    def block(self, call: ToolCall, reason: str) -> Refused:
        """End a call as blocked, as the API does: record, history row, security event."""
        if self._ended_now(call, ToolStatus.BLOCKED, reason):
            self.security.record(
                EventKind.BLOCKED_CALL,
                reason,
                agent_id=call.agent_id,
                call_id=call.id,
                tool_name=call.tool_name,
            )
        return Refused(f"blocked: {reason}")

    def _ended_now(self, call: ToolCall, status: ToolStatus, error: str) -> bool:
        """Record a call that ends before it is sent, with its history row; False when a
        record with its id exists (it was ended before: nothing is written again)."""
        result = ToolResult.accepted(call, status)
        result.error = error
        if not self.calls.create(result):
            return False
        self._remember(result, call.arguments)
        return True

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
            queue=tool.queue(call.arguments),
            parameters=tool.descriptor.parameters,
            tool_limit_s=min(limit, prepared.timeout_s or math.inf),
            kill_grace_s=self.settings.kill_grace_s,
            approved_by=approved_by,
            queued_at=queued.metadata["queued_at"],
        )

    def cancel(self, call_id: str, arguments: dict[str, Any], *, by: str, reason: str) -> None:
        """End a call that has not started as cancelled (a worker then skips it); one
        already running goes on, and its result is ignored. A parked call leaves the
        approval inbox first, so that nobody can approve it any more."""
        for result in self.calls.get_many([call_id]):
            if result is not None and result.status in (
                ToolStatus.QUEUED,
                ToolStatus.AWAITING_APPROVAL,
            ):
                if result.status is ToolStatus.AWAITING_APPROVAL:
                    self.inbox.decide(call_id, approved=False, by=by, reason=reason)
                result.status = ToolStatus.CANCELLED
                result.error = reason
                self.calls.finish(result)
                self._remember(result, arguments)

    def _remember(self, result: ToolResult, arguments: dict[str, Any]) -> None:
        """The history row of a call ended here (blocked, cancelled)."""
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
        that order: a sender that dies in between finds no record, so it parks the call
        again (the inbox keeps its first entry); an operator cannot approve a call without
        a record (the API refuses), so nothing runs twice."""
        call, verdict = prepared.call, prepared.verdict
        ttl_s = self.settings.approval_ttl_s
        self.inbox.park(ApprovalRecord.parked(call, prepared.agent_name, verdict, ttl_s))
        parked = ToolResult.accepted(
            call, ToolStatus.AWAITING_APPROVAL, policy=verdict.policy.value, risk=verdict.risk.value
        )
        if prepared.timeout_s is not None:  # for the approved call
            parked.metadata["time_limit_s"] = prepared.timeout_s
        parked.error = verdict.warning
        self.calls.create(parked)

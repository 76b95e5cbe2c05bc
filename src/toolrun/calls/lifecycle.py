"""A call's life, however it arrives (HTTP, MCP through the API, a DAG node, a sub-agent):
admit → block | park | enqueue; approve | deny | expire; cancel. Workers start and finish
what was enqueued (`workers.runtime`); every ending goes through `calls.endings`.

Admission decides everything once — the tool version (the call's own, else the agent's
pin, else the newest), the arguments with their defaults, the agent's ceiling and tool
set, the risk, a standing rule — and carries the decisions in an `Envelope`. Synchronous:
the API runs it off its event loop, the scheduler and delegation workers in their threads.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from structlog.contextvars import bound_contextvars

from toolrun.calls.endings import Endings
from toolrun.calls.envelope import Envelope, Priority
from toolrun.calls.fairness import Step, agent_key
from toolrun.calls.queueing import Queueing
from toolrun.calls.quotas import QuotaGate, refusal_of
from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.errors import CallConflict, CallNotFound, SandboxViolation, ToolNotFound, TryLater
from toolrun.history.records import secret_names
from toolrun.monitoring import tracing
from toolrun.permissions.agents import AgentProfile, AgentStore
from toolrun.permissions.inbox import ApprovalInbox, ApprovalRecord, ApprovalStatus
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Policy, Risk, Verdict
from toolrun.permissions.quotas import Quota
from toolrun.permissions.rules import RuleBook
from toolrun.permissions.security_log import EventKind, SecurityLog
from toolrun.tools.base import Tool, ToolContext
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus, lineage_of
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import validate_arguments, with_defaults

log = logging.getLogger(__name__)
# Whether some worker of a level is alive on a machine (`workers.presence.has_workers`).
Presence = Callable[[str, PermissionLevel], bool]


class Publisher(Protocol):
    """Queues an admitted call for the workers (`workers.dispatch.FairPublisher`)."""

    def send(self, envelope: Envelope, parameters: dict[str, Any] | None) -> None:
        """Queue a call whose record is stored (an approved call)."""

    def place_step(
        self, envelope: Envelope, parameters: dict[str, Any] | None, encoded: str
    ) -> Step:
        """The step that puts a new call in line (and on the broker, when it is handed
        out), run with its record's creation; `encoded`: the envelope as JSON."""


class CallIdTaken(CallConflict):
    """A record with the call's id exists; `result` is what this call would have been."""

    def __init__(self, result: ToolResult, how: str = "") -> None:
        said = f"a call with id {result.call_id!r} already exists"
        super().__init__(f"{said} {how}" if how else said)
        self.result = result


@dataclass(frozen=True)
class Admitted:
    """A call that passed every check, not yet sent: queued, or parked for approval."""

    envelope: Envelope
    parameters: dict[str, Any]  # the tool's schema: which arguments are never shown
    agent_name: str | None  # shown to operators when the call is parked
    request: str  # the digest of the call as sent (`ToolCall.digest`), kept with its record
    quota: Quota  # the agent's limits, the platform's defaults filling the gaps

    @property
    def call(self) -> ToolCall:
        return self.envelope.call


@dataclass
class Lifecycle:
    """Admits, parks, approves, denies, expires and cancels calls (thread-safe)."""

    settings: Settings
    tools: ToolRegistry
    calls: CallStore
    endings: Endings
    publisher: Publisher
    presence: Presence
    inbox: ApprovalInbox
    rules: RuleBook
    security: SecurityLog
    agents: AgentStore
    quotas: QuotaGate | None = None  # None: no quotas (a platform of one process)
    context: ToolContext = field(init=False)  # for the risk checks, which look at the workspace

    def __post_init__(self) -> None:
        self.context = ToolContext.create(self.settings)
        self._queueing = Queueing(self.calls.client)
        self.default_quota = Quota.defaults(self.settings)

    # -- admission -------------------------------------------------------------------

    def admit(
        self,
        call: ToolCall,
        agent: AgentProfile | None,
        *,
        priority: Priority = Priority.INTERACTIVE,
        metered: bool = False,
    ) -> ToolResult:
        """Decide on a call and carry the decision out; returns its first state (blocked,
        queued or awaiting approval). See `decide` and `send` for what they raise."""
        decided = self.decide(call, agent, priority=priority)
        return decided if isinstance(decided, ToolResult) else self.send(decided, metered=metered)

    def decide(
        self,
        call: ToolCall,
        agent: AgentProfile | None,
        *,
        limit_s: float | None = None,
        priority: Priority = Priority.INTERACTIVE,
    ) -> Admitted | ToolResult:
        """Check a call as `agent` (None: a platform without agents). `call.version` is
        the version asked for, exact or a range; `limit_s` shortens the tool's time limit
        (a node's timeout); `priority` decides its turn on its queue (`calls.fairness`).
        A call refused here is recorded and returned as ended.

        Raises:
            ToolNotFound: no such tool (or version) for this agent; nothing is recorded.
            InvalidArguments: the arguments fail the tool's schema; nothing is recorded.
            CallIdTaken: the call was refused, but its id was taken: nothing is recorded.
        """
        request = call.digest()  # as sent: the version asked for, not the one resolved
        tool = self._resolve(call, agent)
        validate_arguments(tool.validator, call.arguments)
        descriptor = tool.descriptor
        call = call.model_copy(update={"tool_name": descriptor.name, "version": descriptor.version})
        arguments = with_defaults(descriptor.parameters, call.arguments)
        refusal = None if agent is None else agent.refusal(descriptor)
        if refusal is not None:
            return self._block(call, tool, refusal, request)
        try:
            verdict = tool.verdict(arguments, self.context)
        except SandboxViolation as exc:
            return self._block(call, tool, str(exc), request)
        machine = tool.machine(arguments)
        if machine is not None and not self.presence(machine, descriptor.permission):
            stranded = ToolResult.accepted(call, ToolStatus.ERROR)
            stranded.error = tool.stranded(arguments, machine)
            return self._ended_at_once(stranded, call, tool, request)
        approved_by = None
        if verdict.needs_approval:
            approved_by = self._pre_approval(call, arguments, verdict)
        envelope = _envelope(
            call, tool, arguments, verdict, self.settings, approved_by=approved_by, cap_s=limit_s
        ).model_copy(update={"priority": priority})
        agent_name = None if agent is None else agent.name
        quota = self.default_quota if agent is None else agent.quota.over(self.default_quota)
        return Admitted(envelope, descriptor.parameters, agent_name, request, quota)

    def _resolve(self, call: ToolCall, agent: AgentProfile | None) -> Tool:
        """The tool the call names for `agent`; on a miss the tool sources are loaded again
        once (a plugin registered a moment ago, in another process) and looked up again,
        whatever the refresh answers: another thread may have loaded them meanwhile."""
        pin = None if agent is None else agent.pin(call.tool_name)
        visible = None if agent is None else agent.sees
        try:
            return self.tools.resolve(call.tool_name, call.version, pin=pin, visible=visible)
        except ToolNotFound:
            self.tools.refresh(within_s=0)
        return self.tools.resolve(call.tool_name, call.version, pin=pin, visible=visible)

    def send(self, admitted: Admitted, *, metered: bool = False) -> ToolResult:
        """Queue the call, or park it for approval; returns its first state. `metered`:
        a call an agent sent itself (not a DAG node's or a sub-agent's, which the platform
        paces), held to its agent's quotas and its queue's bound before it is queued.

        Raises:
            CallIdTaken: a call with this id exists (nothing was sent).
            QuotaExceeded, Overloaded: not now (nothing was recorded).
        """
        envelope = admitted.envelope
        if envelope.needs_approval:
            return self._park(admitted)
        queued = ToolResult.accepted(envelope.call, ToolStatus.QUEUED)
        if envelope.approved_by is not None:
            queued.metadata["approved_by"] = envelope.approved_by
        # `trace`: the span that sends it, parent of the worker's (`calls.traced`).
        update = {"queued_at": queued.metadata["queued_at"], "trace": tracing.carrier()}
        envelope = envelope.model_copy(update=update)
        # The envelope is kept with the record until a worker starts the call: a message
        # the broker loses is sent again (`workers.reaper`).
        sent = envelope.model_dump_json()
        call = envelope.call
        check = None
        if metered and self.quotas is not None:
            check = self.quotas.check_step(call.agent_id, admitted.quota, envelope.queue)
        queueing = self._queueing.queue(
            check,
            self.calls.create_step(queued, request=admitted.request, envelope=sent),
            self.publisher.place_step(envelope, admitted.parameters, sent),
        )
        if queueing.refused is not None:
            agent = admitted.agent_name or agent_key(call.agent_id)
            refusal = refusal_of(queueing.refused, agent, admitted.quota, envelope.queue)
            if refusal is not None:
                self._refused(admitted, refusal)
        if not queueing.created:
            raise CallIdTaken(queued)
        return queued

    def _refused(self, admitted: Admitted, refused: TryLater) -> NoReturn:
        """Raises a quota's refusal (recorded in the security log, once in a while per
        agent and quota), or `CallIdTaken` when the call was queued before (a client's
        retry, whose first answer was lost: it gets that call's state)."""
        call = admitted.call
        existing = self.calls.get(call.id)
        if existing is not None:
            raise CallIdTaken(existing) from refused
        if refused.first:
            self.security.record(
                EventKind.QUOTA,
                str(refused),
                agent_id=call.agent_id,
                call_id=call.id,
                tool_name=call.tool_name,
            )
        raise refused

    def _park(self, admitted: Admitted) -> ToolResult:
        """Record the call as awaiting approval, then put it in the operators' inbox. In
        that order: the record is what makes an id taken; a sender that dies in between
        leaves a record with no inbox entry, which the scheduler's restart sweep drops
        (so it parks the call again) and which nobody can approve. An entry already
        pending for this very call (its record lost) is kept: the call is parked."""
        envelope = admitted.envelope
        call = envelope.call
        parked = ToolResult.accepted(
            call,
            ToolStatus.AWAITING_APPROVAL,
            policy=envelope.policy.value,
            risk=envelope.risk.value,
            time_limit_s=envelope.time_limit_s,  # for the approved call: a node's timeout
            priority=envelope.priority.value,  # and its turn
        )
        parked.error = envelope.warning
        if not self.calls.create(parked, request=admitted.request):
            raise CallIdTaken(parked)
        ttl_s = self.settings.approval_ttl_s
        verdict = Verdict(envelope.policy, envelope.risk, envelope.warning)
        entry = ApprovalRecord.parked(call, admitted.agent_name, verdict, ttl_s)
        try:
            fresh = self.inbox.park(entry)
        except Exception:
            self.calls.forget(call.id)
            raise
        if not fresh and not _same_pending(self.inbox.get(call.id), entry):
            self.calls.forget(call.id)  # an old call's id, its record gone from Redis by now
            raise CallIdTaken(parked)
        return parked

    def _pre_approval(
        self, call: ToolCall, arguments: dict[str, Any], verdict: Verdict
    ) -> str | None:
        """Who approved this call in advance (auto-approve, a standing rule), or None.
        Rules match the arguments with their defaults, like everything else."""
        if verdict.policy is Policy.CONFIRM and self.settings.auto_approve:
            return "auto_approve"
        rule = self.rules.first_match(call.tool_name, call.agent_id, arguments)
        return None if rule is None else f"rule {rule.id}"

    def _block(self, call: ToolCall, tool: Tool, reason: str, request: str) -> ToolResult:
        """End the call as blocked before anything is sent, and log it."""
        blocked = ToolResult.accepted(call, ToolStatus.BLOCKED)
        blocked.error = reason
        self._ended_at_once(blocked, call, tool, request)
        self.security.record(
            EventKind.BLOCKED_CALL,
            reason,
            agent_id=call.agent_id,
            call_id=call.id,
            tool_name=call.tool_name,
        )
        return blocked

    def _ended_at_once(
        self, result: ToolResult, call: ToolCall, tool: Tool, request: str
    ) -> ToolResult:
        parameters = tool.descriptor.parameters
        if not self.endings.at_once(result, call.arguments, parameters, request=request):
            raise CallIdTaken(result)
        return result

    # -- approval --------------------------------------------------------------------

    def approve(self, call_id: str, *, by: str, reason: str | None = None) -> ToolResult:
        """Queue one parked call on its level's workers; returns its queued state.

        Raises:
            CallNotFound: not in the inbox.
            CallConflict: not awaiting approval, its agent revoked, or its tool gone.
        """
        entry = self.inbox.get(call_id)
        if entry is None:
            raise CallNotFound(f"no call {call_id!r} in the approval inbox")
        waiting = self._awaiting(call_id)
        if entry.agent_id is not None and not self.agents.is_active(entry.agent_id):
            raise CallConflict(f"the agent that sent {call_id!r} was revoked; deny it")
        record = self._decide(call_id, by=by, reason=reason, approved=True)
        call = ToolCall(
            id=record.call_id,
            tool_name=record.tool_name,
            version=record.tool_version,
            arguments=record.arguments,
            agent_id=record.agent_id,
            **lineage_of(waiting.metadata),
        )
        tool = self.tools.find(call.tool_name, call.version)
        if tool is None:  # unregistered while it waited
            missing = self.tools.missing(call.tool_name, call.version)
            self.endings.finish(
                _ended(record, ToolStatus.ERROR, missing, waiting), call.arguments, None
            )
            raise CallConflict(f"tool {record.tool_name}@{record.tool_version} is gone")
        verdict = Verdict(Policy(record.policy), Risk(record.risk), record.warning)
        arguments = with_defaults(tool.descriptor.parameters, call.arguments)
        cap_s = waiting.metadata.get("time_limit_s")
        queued = ToolResult.accepted(call, ToolStatus.QUEUED, approved_by=by)
        envelope = _envelope(
            call, tool, arguments, verdict, self.settings, approved_by=by, cap_s=cap_s
        )
        priority = Priority(waiting.metadata.get("priority", Priority.INTERACTIVE))
        update = {
            "queued_at": queued.metadata["queued_at"],
            "priority": priority,
            "trace": tracing.carrier(),
        }
        envelope = envelope.model_copy(update=update)
        sent = envelope.model_dump_json()
        if not self.calls.replace(queued, was=ToolStatus.AWAITING_APPROVAL, envelope=sent):
            raise CallConflict(f"call {call_id!r} ended while it was being approved")
        try:
            self.publisher.send(envelope, tool.descriptor.parameters)
        except Exception:  # undo, so that the inbox and the call record agree: still pending
            self.inbox.reopen(call_id, ApprovalStatus.APPROVED)
            with contextlib.suppress(Exception):
                self.calls.replace(
                    _ended(record, ToolStatus.AWAITING_APPROVAL, record.warning, waiting),
                    was=ToolStatus.QUEUED,
                )
            raise
        return queued

    def deny(self, call_id: str, *, by: str, reason: str | None = None) -> ToolResult:
        """End one parked call as denied; the caller sees who denied it and why.

        Raises:
            CallNotFound: not in the inbox.
            CallConflict: not awaiting approval.
        """
        waiting = None
        if self.inbox.get(call_id) is not None:
            waiting = self._awaiting(call_id)
        record = self._decide(call_id, by=by, reason=reason, approved=False)
        why = f"denied by {by}" + (f": {record.reason}" if record.reason else "")
        result = _ended(record, ToolStatus.DENIED, f"{record.warning} — {why}", waiting)
        try:
            self._finish(result, record.arguments)
        except Exception:  # the caller would never learn of it: leave it pending instead
            self.inbox.reopen(call_id, ApprovalStatus.DENIED)
            raise
        return result

    def expire(self) -> int:
        """Deny every parked call past its deadline; returns how many."""
        expired = self.inbox.expire()
        for record in expired:
            with bound_contextvars(call_id=record.call_id):
                self._deny_expired(record)
        if expired:
            log.info("%d calls waiting for approval expired", len(expired))
        return len(expired)

    def _deny_expired(self, record: ApprovalRecord) -> None:
        current = self.calls.get(record.call_id)
        if current is None or current.status is not ToolStatus.AWAITING_APPROVAL:
            return  # the call has moved on (a DAG run cancelled it): only the entry expires
        ttl = self.settings.approval_ttl_s
        message = f"{record.warning} — not approved within {ttl:g} s, so denied"
        try:
            self._finish(_ended(record, ToolStatus.DENIED, message, current), record.arguments)
        except Exception:  # pending again: the next sweep tries once more
            self.inbox.reopen(record.call_id, ApprovalStatus.EXPIRED)
            raise

    def _awaiting(self, call_id: str) -> ToolResult:
        """The call's record, which must still say awaiting approval (a call cancelled
        meanwhile, e.g. by its DAG run, must never run)."""
        current = self.calls.get(call_id)
        if current is None:
            raise CallConflict(f"call {call_id!r} has no record awaiting approval")
        if current.status is not ToolStatus.AWAITING_APPROVAL:
            raise CallConflict(
                f"call {call_id!r} is not awaiting approval (it is {current.status})"
            )
        return current

    def _decide(
        self, call_id: str, *, by: str, reason: str | None, approved: bool
    ) -> ApprovalRecord:
        record = self.inbox.decide(call_id, approved=approved, by=by, reason=reason)
        if record is not None:
            return record
        known = self.inbox.get(call_id)
        if known is None:
            raise CallNotFound(f"no call {call_id!r} in the approval inbox")
        if known.status == ApprovalStatus.PENDING:
            raise CallConflict(f"call {call_id!r} waited too long for approval; it expires")
        raise CallConflict(f"call {call_id!r} is not awaiting approval (it is {known.status})")

    # -- endings before a start --------------------------------------------------------

    def cancel(self, call_id: str, arguments: dict[str, Any], *, by: str, reason: str) -> None:
        """End a call that has not started as cancelled (a worker then skips it); one
        already running goes on, and its result is ignored. A parked call leaves the
        approval inbox first, so that nobody can approve it any more."""
        current = self.calls.get(call_id)
        if current is None or current.status not in (
            ToolStatus.QUEUED,
            ToolStatus.AWAITING_APPROVAL,
        ):
            return
        if current.status is ToolStatus.AWAITING_APPROVAL:
            self.inbox.decide(call_id, approved=False, by=by, reason=reason)
        current.status = ToolStatus.CANCELLED
        current.error = reason
        # Only if it has still not started: a worker may have taken it meanwhile.
        self._finish(current, arguments, unless_started=True)

    def _finish(
        self, result: ToolResult, arguments: dict[str, Any], *, unless_started: bool = False
    ) -> None:
        tool = self.tools.get(result.tool_name, result.tool_version)
        parameters = None if tool is None else tool.descriptor.parameters
        self.endings.finish(result, arguments, parameters, unless_started=unless_started)


def _same_pending(existing: ApprovalRecord | None, entry: ApprovalRecord) -> bool:
    """True when `existing` is `entry`'s call, still pending (the same call parked again)."""
    return (
        existing is not None
        and existing.status == ApprovalStatus.PENDING
        and (existing.tool_name, existing.tool_version, existing.agent_id, existing.arguments)
        == (entry.tool_name, entry.tool_version, entry.agent_id, entry.arguments)
    )


def _envelope(
    call: ToolCall,
    tool: Tool,
    arguments: dict[str, Any],
    verdict: Verdict,
    settings: Settings,
    *,
    approved_by: str | None,
    cap_s: float | None,
) -> Envelope:
    limit_s = tool.time_limit_s(arguments, settings)
    return Envelope(
        call=call,
        arguments=arguments,
        queue=tool.queue(arguments),
        policy=verdict.policy,
        risk=verdict.risk,
        warning=verdict.warning,
        approved_by=approved_by,
        time_limit_s=limit_s if cap_s is None else min(limit_s, cap_s),
        repeat_safe=tool.descriptor.repeat_safe,
        secrets=secret_names(tool.descriptor.parameters),
        trace=tracing.carrier(),  # where it was decided: its send continues that trace
    )


def _ended(
    record: ApprovalRecord, status: ToolStatus, error: str, current: ToolResult | None
) -> ToolResult:
    """The call's state after a decision; `current`: its record while it waited."""
    return ToolResult(
        call_id=record.call_id,
        tool_name=record.tool_name,
        tool_version=record.tool_version,
        status=status,
        error=error,
        metadata={
            "agent_id": record.agent_id,
            "queued_at": record.created_at,
            "execution_time_ms": None,
            "decided_by": record.decided_by,
            "policy": record.policy,
            "risk": record.risk,
            **({} if current is None else lineage_of(current.metadata)),
        },
    )

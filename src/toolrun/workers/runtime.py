"""What one worker process needs to run calls: settings, its level, the registry, the store."""

from __future__ import annotations

import logging
import os
import socket
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import redis
from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy.engine import Engine
from structlog.contextvars import bound_contextvars

from toolrun.calls.endings import Endings
from toolrun.calls.envelope import Envelope
from toolrun.calls.fairness import Step
from toolrun.calls.store import Broadcast, CallStore, Finished
from toolrun.calls.traced import (
    arguments_attributes,
    call_attributes,
    envelope_attributes,
    result_attributes,
    shows_content,
)
from toolrun.calls.wiring import platform_endings, platform_lifecycle
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.errors import InvalidArguments
from toolrun.monitoring import tracing
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.approvals import DenyApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.security_log import EventKind, SecurityLog
from toolrun.sandbox.confinement import call_confinement
from toolrun.sandbox.metering import measure
from toolrun.sandbox.proxy import Refusal
from toolrun.sandbox.tracking import kill_labelled, label_for
from toolrun.subagents.catalog import SubAgentStore
from toolrun.subagents.delegation import PlatformDelegation
from toolrun.tools.base import Tool, ToolContext
from toolrun.tools.executor import Executor
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import validate_arguments, with_defaults
from toolrun.workers.app import create_celery_app, longest_time_limit
from toolrun.workers.dispatch import FairPublisher
from toolrun.workers.task_events import DeliveryEvents

log = logging.getLogger(__name__)
_CHANGED = DenyApprover(
    "it was let through as safe, but needs approval now (the workspace changed after it was "
    "queued); submit it again"
)


@dataclass
class WorkerRuntime:
    """Runs calls for the workers of one permission level."""

    settings: Settings
    level: PermissionLevel
    registry: ToolRegistry
    hostname: str = field(default_factory=socket.gethostname)
    delegates: bool = False  # a delegation worker: Task calls get a `delegation`
    # This worker process's name among the live ones (`workers.presence`), on its calls'
    # running state: a reaper settles them when the worker is lost.
    name: str = field(default_factory=lambda: f"{socket.gethostname()}/{os.getpid()}")

    @cached_property
    def store(self) -> CallStore:
        # redis-py notices a fork and reconnects, so pool children may share this lazily.
        client = redis.Redis.from_url(str(self.settings.redis_url))
        return CallStore(client, ttl_s=self.settings.call_ttl_s)

    @cached_property
    def database(self) -> Engine:
        return open_database(self.settings.database)

    @cached_property
    def security(self) -> SecurityLog:
        return SecurityLog(self.database)

    @cached_property
    def endings(self) -> Endings:
        """How this worker's calls end: stored with their counters and their history row's
        makings (the outbox, which the workers' drainers write: `calls.outbox`), then
        the slow-call warning."""
        return platform_endings(self.settings, self.store, history=None)

    @cached_property
    def delegation(self) -> PlatformDelegation:
        """How Task calls run their sub-agents' calls (on delegation workers)."""
        celery = create_celery_app(
            self.settings, longest_time_limit_s=longest_time_limit(self.registry, self.settings)
        )
        lifecycle = platform_lifecycle(
            self.settings,
            self.registry,
            client=self.store.client,
            database=self.database,
            celery=celery,
            ended=self.endings,
        )
        return PlatformDelegation(
            self.registry,
            SubAgentStore(self.database),
            lifecycle=lifecycle,
            agents=AgentStore(self.database),
        )

    @cached_property
    def executor(self) -> Executor:
        return Executor(self.registry, propagate=(SoftTimeLimitExceeded,))

    def run(
        self,
        envelope: Envelope,
        next_calls: FairPublisher | None = None,
        events: DeliveryEvents | None = None,
    ) -> ToolResult | None:
        """Run one delivery of an admitted call and store its final state (None: it had
        already ended). `next_calls`: the call's slot is free once it ends, so the calls
        waiting their turn on its queue are handed out (and put on the broker) in the same
        round trip as the ending (`calls.fairness`). `events`: the delivery's task events,
        published with its running and its final state (`workers.task_events`).

        Every line logged meanwhile carries the call's id.
        """
        with (
            bound_contextvars(call_id=envelope.call.id),
            tracing.span(
                f"process {envelope.queue}",
                kind="consumer",
                attributes=envelope_attributes(envelope),
                parent=envelope.trace,  # the span that queued it: one trace across the queue
            ) as span,
        ):
            result = self._run(envelope, next_calls, events)
            tracing.annotate(span, _outcome(result))
            return result

    def _run(
        self, envelope: Envelope, next_calls: FairPublisher | None, events: DeliveryEvents | None
    ) -> ToolResult | None:
        call = envelope.call
        started_at = time.time()
        facts: dict[str, object] = {
            "worker": f"{'delegation' if self.delegates else self.level}@{self.hostname}",
            "worker_id": self.name,
            "queued_at": envelope.queued_at,
            "started_at": started_at,
            "queue_wait_ms": round((started_at - envelope.queued_at) * 1000, 3),
            "agent_id": call.agent_id,
            **call.lineage(),
        }
        if envelope.approved_by is not None:
            facts["approved_by"] = envelope.approved_by
        # Running is recorded before the checks below so the count and state take one trip;
        # a refusal overwrites it at once. The call is checked while the start is on its
        # way: only what to do with a redelivery waits for its answer.
        running = self._state(call, ToolStatus.RUNNING, facts)
        started = [] if events is None else events.started()
        starting = self.store.send_start(running, started)
        try:
            checked: Tool | ToolResult | Exception = self._checked(envelope)
        except Exception as exc:  # raised once the start's answer is read (below)
            checked = exc
        deliveries = starting.deliveries()
        if events is not None:
            events.start_published = True
        if deliveries == 0:
            log.warning("call %s already ended; redelivery ignored", call.id)
            return None
        if isinstance(checked, Exception):
            raise checked
        facts["deliveries"] = deliveries
        checked = self._redelivery_refused(call, checked, deliveries) or checked
        if isinstance(checked, ToolResult):
            tool, result = None, checked
        else:
            tool, result = checked, self._execute(envelope, checked)
        # Each earlier delivery reached this point and may have started the tool.
        facts["tool_starts"] = deliveries - 1 + (tool is not None)
        result.metadata.update(facts)
        # Logged before the result is stored: whoever reads the result finds the event.
        if result.status is ToolStatus.BLOCKED:
            self.security.record(
                EventKind.NETWORK
                if result.metadata.get("blocked_network")
                else EventKind.BLOCKED_CALL,
                result.error or "blocked",
                agent_id=call.agent_id,
                call_id=call.id,
                tool_name=call.tool_name,
                target=result.metadata.get("blocked_target"),
            )
        for denied in _jail_denials(result):
            self.security.record(
                EventKind.JAIL,
                f"the jail refused it: {denied['error']}",
                agent_id=call.agent_id,
                call_id=call.id,
                tool_name=call.tool_name,
                target=denied["path"],
            )
        pump = None if next_calls is None else next_calls.pump_step(envelope.queue)
        ended = None if events is None else events.ended(result)
        with tracing.span(f"record {call.tool_name}", attributes=call_attributes(call)):
            self.end(call, result, tool, pump=pump, broadcast=ended)
        return result

    def end(
        self,
        call: ToolCall,
        result: ToolResult,
        tool: Tool | None = None,
        *,
        secrets: dict[str, Any] | None = None,
        pump: Step | None = None,
        broadcast: Broadcast | None = None,
    ) -> Finished:
        """Store a final state and tell the subscribers (see `calls.endings`); `tool`: the
        call's, when the caller has it at hand; `secrets`: which arguments to redact when
        the tool is not found here (`Envelope.redaction`: a plugin, in the main process);
        `pump`: the queue whose slot the ending frees, and `broadcast`: the task's event,
        both in the ending's round trip (`CallStore.finish`)."""
        tool = tool or self.registry.get(call.tool_name, call.version)
        parameters = secrets if tool is None else tool.descriptor.parameters
        return self.endings.finish(
            result, call.arguments, parameters, pump=pump, broadcast=broadcast
        )

    def _checked(self, envelope: Envelope) -> Tool | ToolResult:
        """The call's tool, or its final result when it must not run here. The message is
        not trusted: the worker checks its own level, and that the arguments it would run
        are the call's (valid, with their defaults), which the history records."""
        call = envelope.call
        tool = self.registry.find(call.tool_name, call.version)  # a plugin just registered?
        if tool is None:
            return self._state(
                call, ToolStatus.ERROR, error=self.registry.missing(call.tool_name, call.version)
            )
        if not self.level.allows(tool.descriptor.permission):
            needed = tool.descriptor.permission
            return self._state(
                call,
                ToolStatus.BLOCKED,
                error=f"a {self.level} worker may not run {tool.descriptor.tool_id} "
                f"(needs {needed})",
            )
        try:
            validate_arguments(tool.validator, call.arguments)
        except InvalidArguments as exc:
            return self._state(call, ToolStatus.ERROR, error=f"invalid arguments: {exc}")
        if envelope.arguments != with_defaults(tool.descriptor.parameters, call.arguments):
            return self._state(
                call,
                ToolStatus.BLOCKED,
                error="the message's arguments are not the call's with its defaults; refused",
            )
        return tool

    def _redelivery_refused(
        self, call: ToolCall, checked: Tool | ToolResult, deliveries: int
    ) -> ToolResult | None:
        """The final result of a delivery that must not run because earlier ones were
        lost: too many (the call is dead-lettered), or a tool not safe to run twice."""
        if deliveries > self.settings.max_deliveries:
            self.store.dead_letter(call.id)
            return self._state(
                call,
                ToolStatus.ERROR,
                error=f"worker lost {deliveries - 1} times while running this call; "
                "it was dead-lettered and will not be retried",
            )
        if deliveries > 1 and isinstance(checked, Tool) and not checked.descriptor.repeat_safe:
            error = lost_after_start(checked.descriptor.tool_id, deliveries - 1)
            return self._state(call, ToolStatus.ERROR, error=error)
        return None

    def _execute(self, envelope: Envelope, tool: Tool) -> ToolResult:
        call = envelope.call
        # A call let through as safe is rated again: the workspace may have changed since
        # (a file it would create now exists), and then it needs an approval it never had.
        rate = envelope.approved_by is None

        def refused(refusal: Refusal) -> None:
            self.security.record(
                EventKind.NETWORK,
                refusal.reason,
                agent_id=call.agent_id,
                call_id=call.id,
                tool_name=call.tool_name,
                target=f"{refusal.host}:{refusal.port}",
            )

        # A tool that starts no process runs without the jail (as `run_local` does): its
        # runner refuses to start one, and no thread samples a process tree for it.
        processes = tool.starts_processes
        jailing = call_confinement(self.settings, refused) if processes else nullcontext()
        parameters = tool.descriptor.parameters
        content = tracing.enabled() and shows_content(self.settings.trace_content, call.tool_name)
        attributes = {
            **call_attributes(call),
            "toolrun.tool.version": call.version,
            "toolrun.level": tool.descriptor.permission.value,
            **(arguments_attributes(envelope.arguments, parameters) if content else {}),
        }
        with (
            tracing.span(f"execute_tool {call.tool_name}", attributes=attributes) as span,
            jailing as jail,
            measure(tree=processes) as usage,
        ):
            ctx = ToolContext.create(
                self.settings,
                approver=_CHANGED,
                label=label_for(call.id),
                jail=jail,
                agent_id=call.agent_id,
                call_id=call.id,
                delegation=self.delegation if self.delegates else None,
                processes=processes,
            )
            started = time.perf_counter()
            try:
                result = self.executor.run_admitted(tool, call, envelope.arguments, ctx, rate=rate)
            except SoftTimeLimitExceeded:
                # The runner ends what it started, unless the limit cut in before it could.
                kill_labelled(label_for(call.id))
                result = self._state(
                    call, ToolStatus.TIMEOUT, error="call exceeded its time limit and was stopped"
                )
                elapsed_ms = (time.perf_counter() - started) * 1000
                result.metadata["execution_time_ms"] = round(elapsed_ms, 3)
            failed = None if result.ok else result.status.value
            tracing.annotate(span, {"toolrun.status": result.status.value}, error=failed)
            if content:
                tracing.annotate(
                    span, result_attributes(result.output, envelope.arguments, parameters)
                )
        result.metadata["cpu_s"] = usage.cpu_s
        result.metadata["peak_rss_bytes"] = usage.peak_rss_bytes
        return result

    def _state(
        self,
        call: ToolCall,
        status: ToolStatus,
        metadata: dict[str, object] | None = None,
        *,
        error: str | None = None,
    ) -> ToolResult:
        return ToolResult(
            call_id=call.id,
            tool_name=call.tool_name,
            tool_version=call.version,  # the exact version the lifecycle resolved
            status=status,
            error=error,
            metadata=dict(metadata or {}),
        )


def lost_after_start(tool_id: str, starts: int) -> str:
    """Why a call of a tool (`tool_id`: name@version) that is not safe to run twice, whose
    worker was lost after the tool may have started `starts` times, does not run again."""
    return (
        f"worker lost after the tool started ({starts} time{'s' if starts > 1 else ''}); "
        f"its effects are unknown, and {tool_id} is not safe to run twice: not run again"
    )


def _outcome(result: ToolResult | None) -> tracing.Attributes:
    """How a delivery went, for its span (None: the call had already ended)."""
    if result is None:
        return {"toolrun.redelivery_ignored": True}
    facts = result.metadata
    return {
        "toolrun.status": result.status.value,
        "toolrun.queue_wait_ms": facts.get("queue_wait_ms"),
        "toolrun.deliveries": facts.get("deliveries"),
        "toolrun.worker": facts.get("worker"),
    }


def _jail_denials(result: ToolResult) -> list[dict[str, str]]:
    """What the jail refused the call's processes: bash and terminal sessions report it in
    their output, an imported MCP server's call in the metadata."""
    output = result.output
    found = output.get("jail_denied") if isinstance(output, dict) else None
    found = found if isinstance(found, list) else result.metadata.get("jail_denied")
    return found if isinstance(found, list) else []

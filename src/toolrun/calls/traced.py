"""The lifecycle with spans: a call's admission (the decision, the verdict) and its hop
onto the queue, in the trace of whoever sent it (an agent's request, a DAG node, a Task
call). `calls.wiring` builds it instead of `Lifecycle` when traces are on
(`monitoring.tracing`); off, nothing of it runs. Also what a worker's tool span says of a
call: its names and ids always, its arguments and output only for the tools an operator
names (`Settings.trace_content`), secrets redacted.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from toolrun.calls.envelope import Envelope, Priority
from toolrun.calls.lifecycle import Admitted, Lifecycle
from toolrun.history.records import REDACTED, redact, secret_names
from toolrun.monitoring import tracing
from toolrun.permissions.agents import AgentProfile
from toolrun.tools.model import ToolCall, ToolResult

# Each of a span's arguments and result, at most: a backend keeps the whole span in memory.
MAX_CONTENT_BYTES = 4096
_CUT = "…"


def call_attributes(call: ToolCall) -> tracing.Attributes:
    """What names a call in every span of its trace (OpenTelemetry's GenAI conventions,
    then toolrun's own): never its arguments."""
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool_name,
        "gen_ai.tool.call.id": call.id,
        "toolrun.agent": call.agent_id,
    }


def shows_content(named: Collection[str], tool_name: str) -> bool:
    """True when an operator asked for the arguments and output of `tool_name`'s calls
    in their spans (`Settings.trace_content`: its name, or "*")."""
    return tool_name in named or "*" in named


def arguments_attributes(
    arguments: dict[str, Any], parameters: dict[str, Any] | None
) -> tracing.Attributes:
    """The arguments a tool runs with, as JSON, secret (``writeOnly``) values redacted
    as in the call's history row."""
    shown = json.dumps(redact(arguments, parameters), default=str, ensure_ascii=False)
    return {"gen_ai.tool.call.arguments": _bounded(shown)}


def result_attributes(
    output: Any, arguments: dict[str, Any], parameters: dict[str, Any] | None
) -> tracing.Attributes:
    """A tool's output as text (nothing when it has none), any secret argument's value
    in it redacted: a tool may echo what it was given."""
    if output is None:
        return {}
    text = (
        output if isinstance(output, str) else json.dumps(output, default=str, ensure_ascii=False)
    )
    for name in secret_names(parameters):
        value = arguments.get(name)
        if isinstance(value, str) and value:
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]  # as it is inside JSON
            text = text.replace(value, REDACTED).replace(escaped, REDACTED)
    return {"gen_ai.tool.call.result": _bounded(text)}


def _bounded(text: str) -> str:
    """`text`, cut to at most MAX_CONTENT_BYTES of UTF-8 (ending in "…" when cut)."""
    encoded = text.encode()
    if len(encoded) <= MAX_CONTENT_BYTES:
        return text
    kept = encoded[: MAX_CONTENT_BYTES - len(_CUT.encode())]
    return kept.decode(errors="ignore") + _CUT


def envelope_attributes(envelope: Envelope) -> tracing.Attributes:
    """The decisions an envelope carries."""
    return {
        **call_attributes(envelope.call),
        "toolrun.tool.version": envelope.call.version,
        "toolrun.verdict": envelope.policy.value,
        "toolrun.risk": envelope.risk.value,
        "toolrun.approved_by": envelope.approved_by,
        "messaging.destination.name": envelope.queue,
    }


@dataclass
class TracedLifecycle(Lifecycle):
    """`Lifecycle`, each decision and each send in a span of its own."""

    def decide(
        self,
        call: ToolCall,
        agent: AgentProfile | None,
        *,
        limit_s: float | None = None,
        priority: Priority = Priority.INTERACTIVE,
    ) -> Admitted | ToolResult:
        with tracing.span(f"admit {call.tool_name}", attributes=call_attributes(call)) as span:
            decided = super().decide(call, agent, limit_s=limit_s, priority=priority)
            if span is not None:
                tracing.annotate(span, self._decision(decided, agent))
            return decided

    def send(self, admitted: Admitted, *, metered: bool = False) -> ToolResult:
        """A child of the span the call was decided in (a DAG node is sent after its run
        is stored), whose context the envelope then carries to the worker."""
        envelope = admitted.envelope
        parking = envelope.needs_approval
        name = f"park {envelope.call.tool_name}" if parking else f"send {envelope.queue}"
        with tracing.span(
            name,
            kind="internal" if parking else "producer",
            attributes=envelope_attributes(envelope),
            parent=envelope.trace or None,
        ) as span:
            sent = super().send(admitted, metered=metered)
            tracing.annotate(span, {"toolrun.status": sent.status.value})
            return sent

    def approve(self, call_id: str, *, by: str, reason: str | None = None) -> ToolResult:
        attributes = {"gen_ai.tool.call.id": call_id, "toolrun.approved_by": by}
        with tracing.span("approve", kind="producer", attributes=attributes) as span:
            queued = super().approve(call_id, by=by, reason=reason)
            tracing.annotate(span, {"gen_ai.tool.name": queued.tool_name})
            return queued

    def _decision(
        self, decided: Admitted | ToolResult, agent: AgentProfile | None
    ) -> tracing.Attributes:
        if isinstance(decided, ToolResult):  # refused at once: blocked, or stranded
            return {
                "toolrun.status": decided.status.value,
                "toolrun.tool.version": decided.tool_version,
            }
        envelope = decided.envelope
        tool = self.tools.get(envelope.call.tool_name, envelope.call.version)
        return {
            **envelope_attributes(envelope),
            "toolrun.agent.name": None if agent is None else agent.name,
            "toolrun.level": None if tool is None else tool.descriptor.permission.value,
        }

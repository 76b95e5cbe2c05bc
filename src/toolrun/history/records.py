"""A call's history row, and how a ToolResult becomes one (secrets redacted)."""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text
from sqlmodel import Field, SQLModel

from toolrun.tools.model import ToolResult

REDACTED = "***"


class CallFields(SQLModel):
    """One call as it ended (or as far as it got): who, what, how long, how it went."""

    call_id: str = Field(primary_key=True)
    agent_id: str | None = None
    tool_name: str
    tool_version: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    status: str = Field(index=True)
    queued_at: float
    started_at: float | None = None
    finished_at: float | None = None
    execution_time_ms: float | None = None
    queue_wait_ms: float | None = None
    worker: str | None = None
    deliveries: int | None = None
    cpu_s: float | None = None
    peak_rss_bytes: int | None = Field(default=None, sa_column=Column(BigInteger))
    output_bytes: int | None = Field(default=None, sa_column=Column(BigInteger))
    error_type: str | None = None
    error: str | None = Field(default=None, sa_column=Column(Text))
    traceback: str | None = Field(default=None, sa_column=Column(Text))
    approved_by: str | None = None
    parent_call_id: str | None = Field(default=None, index=True)  # the Task call that made it
    subagent: str | None = None  # the sub-agent that made it, on behalf of agent_id


class NamedCall(CallFields):
    """A history row as the API shows and exports it: with its agent's name (revoked
    agents' too)."""

    agent_name: str | None = None


class CallRecord(CallFields, table=True):
    """A call's row in the history table."""

    __tablename__ = "call_history"
    __table_args__ = (
        Index("ix_call_history_newest", "queued_at", "call_id"),
        Index("ix_call_history_tool_newest", "tool_name", "queued_at"),
        Index("ix_call_history_agent_newest", "agent_id", "queued_at", "call_id"),
        Index("ix_call_history_finished", "finished_at"),
        Index("ix_call_history_tool_finished", "tool_name", "finished_at"),
    )


def record_of(
    result: ToolResult, arguments: dict[str, Any], parameters: dict[str, Any] | None
) -> CallRecord:
    """The history row of `result` (see `row_of`)."""
    return CallRecord(**row_of(result, arguments, parameters))


def row_of(
    result: ToolResult, arguments: dict[str, Any], parameters: dict[str, Any] | None
) -> dict[str, Any]:
    """The history row of `result`, column by column, as written (no model built: the
    workers write one per call); `parameters` (the tool's schema) marks secret arguments
    with ``"writeOnly": true``, whose values are never stored."""
    meta = result.metadata
    queued_at = meta.get("queued_at") or meta.get("started_at") or meta.get("finished_at")
    output = None if result.output is None else len(json.dumps(result.output, default=str))
    finished_at = meta.get("finished_at") or (time.time() if result.final else None)
    return {
        "call_id": result.call_id,
        "agent_id": meta.get("agent_id"),
        "tool_name": result.tool_name,
        "tool_version": result.tool_version,
        "arguments": redact(arguments, parameters),
        "status": result.status.value,
        "queued_at": float(queued_at or 0.0),
        "started_at": meta.get("started_at"),
        "finished_at": finished_at,
        "execution_time_ms": meta.get("execution_time_ms"),
        "queue_wait_ms": meta.get("queue_wait_ms"),
        "worker": meta.get("worker"),
        "deliveries": meta.get("deliveries"),
        "cpu_s": meta.get("cpu_s"),
        "peak_rss_bytes": meta.get("peak_rss_bytes"),
        "output_bytes": output,
        "error_type": meta.get("error_type"),
        "error": result.error,
        "traceback": meta.get("traceback"),
        "approved_by": meta.get("approved_by") or meta.get("decided_by"),
        "parent_call_id": meta.get("parent_call_id"),
        "subagent": meta.get("subagent"),
    }


def secret_names(parameters: dict[str, Any] | None) -> list[str]:
    """The arguments a tool's schema marks secret (``writeOnly``): never stored or shown."""
    properties = (parameters or {}).get("properties", {})
    return sorted(
        name
        for name, schema in properties.items()
        if isinstance(schema, dict) and schema.get("writeOnly")
    )


def redact(arguments: dict[str, Any], parameters: dict[str, Any] | None) -> dict[str, Any]:
    """`arguments` with the values of secret (``writeOnly``) properties replaced."""
    properties = (parameters or {}).get("properties", {})
    return {
        name: REDACTED if properties.get(name, {}).get("writeOnly") else value
        for name, value in arguments.items()
    }

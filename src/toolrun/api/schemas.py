"""Request bodies of the API, and the few responses that are not core models (most are:
ToolDescriptor, ToolResult)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolrun.calls.envelope import Priority
from toolrun.calls.keys import DAG_CALL_PREFIX
from toolrun.tools.model import ToolResult

CALL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"


class CallRequest(BaseModel):
    """A tool call submitted by an agent."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(
        None, pattern=CALL_ID_PATTERN, description="Idempotency key; generated when absent."
    )
    tool_name: str = Field(min_length=1, max_length=64)
    version: str | None = Field(None, max_length=64, description="Default: newest version.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    priority: Priority = Field(
        Priority.INTERACTIVE,
        description="batch: work that can wait, served after interactive calls on its queue "
        "(never starved).",
    )

    @field_validator("id")
    @classmethod
    def _not_a_node_call(cls, call_id: str | None) -> str | None:
        if call_id is not None and call_id.startswith(DAG_CALL_PREFIX):
            raise ValueError(
                f"call ids starting with {DAG_CALL_PREFIX!r} are reserved for DAG node calls"
            )
        return call_id


class Health(BaseModel):
    """What /healthz reports."""

    status: str
    redis: str
    database: str
    sandbox: str
    network: str
    filesystem: str
    sandbox_paths: dict[str, list[str]]
    # Under `toolrun up`: each process's pid, state and restarts; None elsewhere.
    processes: dict[str, dict[str, Any]] | None = None


class OpenCall(ToolResult):
    """A call not ended (queued, running, awaiting approval) in its current state, with
    its agent's name (a revoked agent's too; null for a call of no agent)."""

    agent_name: str | None = None

"""A call's statuses as the CLI's options name them, without the tool model: importing
`toolrun.tools.model` brings pydantic and jsonschema, a tenth of a second at every start
of `toolrun history`. tests/test_cli_startup_settings.py checks them against `ToolStatus`.
"""

from __future__ import annotations

from enum import StrEnum


class CallStatus(StrEnum):
    """`ToolStatus`'s values, in its order."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    ERROR = "error"
    BLOCKED = "blocked"
    TIMEOUT = "timeout"
    AWAITING_APPROVAL = "awaiting_approval"
    DENIED = "denied"
    CANCELLED = "cancelled"


class OpenStatus(StrEnum):
    """The statuses of a call that has not ended (`ToolResult.final` is false)."""

    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"

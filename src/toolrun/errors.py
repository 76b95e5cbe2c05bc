"""Errors raised by toolrun; callers catch the family they can handle.

ToolrunError
├── ToolNotFound           no registered tool matches a name (and version)
├── InvalidArguments       arguments do not satisfy the tool's parameter schema
├── InvalidDescriptor      a tool descriptor fails validation at registration
├── DuplicateTool          name@version is already registered
├── SandboxViolation       a path or process request leaves the sandbox
│   └── NetworkRefused     a host off the network allowlist
├── CallNotFound           no call (or no inbox entry) has this id
├── CallConflict           the call's state forbids the request (its id is taken, it is
│                          no longer awaiting approval, its tool is gone)
├── TryLater               not now: come back after `retry_after_s`
│   ├── QuotaExceeded      the agent is over one of its quotas (HTTP 429)
│   └── Overloaded         the call's queue holds as many calls as it may (HTTP 503)
└── ToolExecutionError     a tool ran and failed; may carry partial output
    └── ToolTimeout        a tool ran past its time limit
"""

from __future__ import annotations

from typing import Any


class ToolrunError(Exception):
    """Root of every error toolrun raises on purpose."""


class ToolNotFound(ToolrunError):
    """No registered tool matches the requested name and version."""


class InvalidArguments(ToolrunError):
    """Arguments do not satisfy the tool's parameter schema."""


class InvalidDescriptor(ToolrunError):
    """A tool descriptor is malformed (schema, version, examples...)."""


class DuplicateTool(ToolrunError):
    """A tool with the same name@version is already registered."""


class SandboxViolation(ToolrunError):
    """A request would leave the workspace or break a sandbox rule; `target` names what it
    tried to reach (a host, a path) when that is worth logging."""

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        self.target = target


class NetworkRefused(SandboxViolation):
    """A host the network allowlist does not name."""


class ToolExecutionError(ToolrunError):
    """A tool ran and failed; `output` keeps what it produced before failing."""

    def __init__(self, message: str, *, output: Any = None) -> None:
        super().__init__(message)
        self.output = output


class ToolTimeout(ToolExecutionError):
    """A tool ran past its time limit and was stopped."""


class CallNotFound(ToolrunError):
    """No call, or no approval inbox entry, has this id."""


class CallConflict(ToolrunError):
    """The call's current state forbids the request (an id already taken, a call that is
    no longer awaiting approval)."""


class TryLater(ToolrunError):
    """The call was not accepted now, and nothing was recorded: send it again after
    `retry_after_s` seconds."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.first = True  # the first such refusal in a while: worth a security event


class QuotaExceeded(TryLater):
    """The agent is over one of its quotas (`quota`: which)."""

    def __init__(self, message: str, retry_after_s: float, quota: str) -> None:
        super().__init__(message, retry_after_s)
        self.quota = quota


class Overloaded(TryLater):
    """The call's queue already holds as many waiting calls as it may."""

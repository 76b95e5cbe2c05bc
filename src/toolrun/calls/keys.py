"""Redis key names of call records; the only place they are spelled."""

from __future__ import annotations

PREFIX = "toolrun"
DEAD_LETTERS = f"{PREFIX}:dead_letters"


def record(call_id: str) -> str:
    """JSON ToolResult of the call, in its latest state."""
    return f"{PREFIX}:call:{call_id}"


def done(call_id: str) -> str:
    """A list that receives a token when the call ends, for waiters to block on."""
    return f"{PREFIX}:done:{call_id}"


def deliveries(call_id: str) -> str:
    """How many times a worker has started the call (redeliveries after a lost worker)."""
    return f"{PREFIX}:deliveries:{call_id}"


NETWORK = f"{PREFIX}:network"


def network(worker: str) -> str:
    """How a worker isolates its tools' network: "isolated" or "degraded: <why>"."""
    return f"{NETWORK}:{worker}"

"""Redis key names of call records; the only place they are spelled."""

from __future__ import annotations

PREFIX = "toolrun"
DEAD_LETTERS = f"{PREFIX}:dead_letters"


RECORD_PREFIX = f"{PREFIX}:call:"


def record(call_id: str) -> str:
    """JSON ToolResult of the call, in its latest state."""
    return RECORD_PREFIX + call_id


def request(call_id: str) -> str:
    """The digest of what the call asked for (`ToolCall.digest`), kept beside its record."""
    return f"{PREFIX}:request:{call_id}"


def done(call_id: str) -> str:
    """A list that receives a token when the call ends, for waiters to block on."""
    return f"{PREFIX}:done:{call_id}"


def deliveries(call_id: str) -> str:
    """How many times a worker has started the call (redeliveries after a lost worker)."""
    return f"{PREFIX}:deliveries:{call_id}"


# History rows of calls ended by workers, stored with their final state and drained into
# the database (`calls.outbox`): a stream, read by the consumer group HISTORY_WRITERS.
HISTORY_OUTBOX = f"{PREFIX}:history:outbox"
HISTORY_WRITERS = "history-writers"

# Every worker process (by name) → until when it counts as alive (`workers.presence`).
WORKERS = f"{PREFIX}:workers"
REAPER_LOCK = f"{PREFIX}:reaper"  # held by the worker whose reaper is sweeping
# Calls queued and not yet started: id → when queued or handed out (a sorted set; 0 for
# one handed out with no message kept: `calls.fairness`), id → its envelope (a hash), so
# that a message the broker lost (a worker killed as it took it) is sent again.
SENT = f"{PREFIX}:sent"
SENT_ENVELOPES = f"{PREFIX}:sent:envelopes"
# A call waiting its turn on a shared queue → its delivery (`workers.messages`), which
# the pump that hands it out puts on the broker (`calls.fairness`).
SENT_MESSAGES = f"{PREFIX}:sent:messages"
# Call id → the worker process that took its message (`workers.broker`), until the call
# ends.
HOLDERS = f"{PREFIX}:holders"

NETWORK = f"{PREFIX}:network"


def network(worker: str) -> str:
    """How a worker isolates its tools' network: "isolated" or "degraded: <why>"."""
    return f"{NETWORK}:{worker}"


FILESYSTEM = f"{PREFIX}:filesystem"


def filesystem(worker: str) -> str:
    """How a worker confines its tools' view of files: JSON with "filesystem" ("isolated
    (...)" or "degraded: <why>") and the extra read-only and read-write paths."""
    return f"{FILESYSTEM}:{worker}"


def machine(machine_id: str, level: str) -> str:
    """The workers of a level on one machine: a sorted set of worker names, each scored
    with the time its presence expires unless renewed."""
    return f"{PREFIX}:machine:{machine_id}:{level}"


# DAG node calls: the scheduler hears of their end through SCHEDULER_WAKE. Only the
# scheduler makes such ids (the API refuses them from clients).
DAG_CALL_PREFIX = "dag:"
# A node call id, "dag:<run>:<node>:<attempt>", must fit a call id (128 characters) with
# node ids of up to 64 characters and attempts up to 3 digits: run ids are kept to 48.
MAX_RUN_ID_CHARS = 48
# News for the scheduler: ended node calls' ids, new runs' ids, "cancel:<run id>".
SCHEDULER_WAKE = f"{PREFIX}:scheduler:wake"
# The name of the scheduler process that leads (`scheduler.lease`), while its lease lasts.
SCHEDULER_LEASE = f"{PREFIX}:scheduler:leader"
CANCEL_PREFIX = "cancel:"


def dag_call(run_id: str, node_id: str, attempt: int) -> str:
    """The call id of one attempt of one node: the same on every dispatch of that attempt,
    so a scheduler that dispatches it again after a restart finds the call it made."""
    return f"{DAG_CALL_PREFIX}{run_id}:{node_id}:{attempt}"


def run_of(call_id: str) -> str | None:
    """The run a DAG node call belongs to, or None for any other call."""
    if not call_id.startswith(DAG_CALL_PREFIX):
        return None
    return call_id[len(DAG_CALL_PREFIX) :].split(":", 1)[0]


# Fair dispatch (`calls.fairness`): the calls of each shared queue wait in per-agent lists,
# taken in turn, and reach the broker only while the queue's workers have a free slot.
FAIR = f"{PREFIX}:fair"
FAIR_SLOTS = f"{FAIR}:slots"  # worker name → its pool size
FAIR_WAITING = f"{FAIR}:waiting"  # "q:<queue>" / "a:<agent>" → calls waiting, not yet sent
AGENTS_OPEN = f"{FAIR}:agents"  # the agents with calls queued or running


def fair_workers(queue: str) -> str:
    """The workers consuming a shared queue: a sorted set of names scored with the time
    their presence expires unless renewed (`workers.presence`)."""
    return f"{FAIR}:{queue}:workers"


def fair_sent(queue: str) -> str:
    """The calls of a queue handed to its workers and not ended: id → when (a sorted set)."""
    return f"{FAIR}:{queue}:sent"


def fair_turn(queue: str) -> str:
    """A queue's count of calls taken, which decides when batch work has its turn."""
    return f"{FAIR}:{queue}:turn"


def fair_ring(queue: str, priority: str) -> str:
    """The agents with calls waiting on a queue at one priority, in the order served
    (beside it, the scripts of `calls.fairness` keep ``:new``, the agents that had nothing
    waiting, ``:turn``, and ``:agent:<agent>``, each agent's calls)."""
    return f"{FAIR}:{queue}:{priority}"


def agent_open(agent: str) -> str:
    """An agent's calls queued or running: id → when queued (a sorted set)."""
    return f"{PREFIX}:agent:{agent}:open"


def agent_bucket(agent: str) -> str:
    """An agent's token bucket for its calls-per-second quota: tokens, and when counted."""
    return f"{PREFIX}:agent:{agent}:bucket"


THROTTLED = f"{PREFIX}:throttled"  # "<agent>|<quota>" → calls refused for it
NO_AGENT = "-"  # the agent key of calls on a platform without agent profiles

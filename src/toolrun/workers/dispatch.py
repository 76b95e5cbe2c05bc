"""Sending an admitted call to its tool's queue: its time limits, what Flower shows of
it, and its delivery (`workers.messages`), put on the broker in its agent's turn."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from toolrun.calls.envelope import Envelope
from toolrun.calls.fairness import FAIR_QUEUES, FairQueues, Step
from toolrun.history.records import redact
from toolrun.workers.messages import Delivery, Messages, TaskOptions

# The tool's own limit fires first and the sandbox kills its processes: SIGTERM, a grace,
# SIGKILL to its group, then a sweep with another grace and up to 2 s for the cgroup to
# empty. Celery's soft limit (an exception in the task) must wait for all of that, the
# hard limit (the pool child is killed) comes last. (Sweeps that keep finding new
# processes, a fork loop on a crowded host, may run longer: the soft limit then cuts
# them short, the group already killed.)
CLEANUP_SLACK_S = 4.0
HARD_AFTER_SOFT_S = 3.0
# Flower shows these in its task list and page; Celery's own default cap is 1024.
MAX_REPR_CHARS = 1024


def time_limits(tool_limit_s: float, kill_grace_s: float = 1.0) -> tuple[int, int]:
    """(soft, hard) Celery limits, whole seconds, for a tool that may run `tool_limit_s`."""
    soft = math.ceil(tool_limit_s + 3 * kill_grace_s + CLEANUP_SLACK_S)
    return soft, math.ceil(soft + HARD_AFTER_SOFT_S)


def shown_arguments(arguments: dict[str, Any], parameters: dict[str, Any] | None) -> str:
    """A call's arguments as Flower (and Celery's log lines) show them: JSON, secret
    (``writeOnly``) values redacted, at most MAX_REPR_CHARS long."""
    return _truncated(json.dumps(redact(arguments, parameters), default=str))


def _truncated(text: str) -> str:
    if len(text) <= MAX_REPR_CHARS:
        return text
    return text[: MAX_REPR_CHARS - 1] + "…"


def task_options(
    envelope: Envelope, parameters: dict[str, Any] | None, kill_grace_s: float
) -> TaskOptions:
    """The Celery options of an admitted call's message: its limits, and what Flower (and
    Celery's log lines) show of it. `parameters`: the tool's JSON Schema, which marks the
    arguments never to be shown."""
    call = envelope.call
    soft, hard = time_limits(envelope.time_limit_s, kill_grace_s)
    about = {
        "version": call.version,
        "agent_id": call.agent_id,
        "approved_by": envelope.approved_by,
    }
    return TaskOptions(
        soft_time_limit=soft,
        time_limit=hard,
        shadow=f"toolrun.{call.tool_name}",
        argsrepr=shown_arguments(call.arguments, parameters),
        kwargsrepr=_truncated(json.dumps(about)),
    )


@dataclass(frozen=True)
class FairPublisher:
    """The lifecycle's way to queue a call: on a shared queue, in its agent's turn
    (`calls.fairness`); on a machine's queue, on the broker at once. Either way the call's
    delivery (`workers.messages`) is built here and put on the broker by the script that
    hands the call out, in that script's round trip."""

    messages: Messages
    queues: FairQueues
    kill_grace_s: float

    def delivery(
        self, envelope: Envelope, parameters: dict[str, Any] | None, encoded: str | None = None
    ) -> Delivery:
        """`envelope`'s message and task-sent event; `encoded`: the envelope as JSON,
        when the caller has it already."""
        options = task_options(envelope, parameters, self.kill_grace_s)
        body = envelope.model_dump_json() if encoded is None else encoded
        return self.messages.delivery(envelope, options, body)

    def send(self, envelope: Envelope, parameters: dict[str, Any] | None) -> None:
        """Queue an admitted call whose record (with its envelope) is stored.

        Raises:
            redis.RedisError: the call was not queued.
        """
        self.queues.place(self.place_step(envelope, parameters, envelope.model_dump_json()))

    def place_step(
        self, envelope: Envelope, parameters: dict[str, Any] | None, encoded: str
    ) -> Step:
        """The step that puts a new call in line, run in the same round trip as its
        record's creation (`calls.queueing`): on a shared queue, in its agent's list, and
        the pump; on a machine's queue, among its agent's open calls and on the broker.
        `encoded`: the envelope as JSON."""
        call = envelope.call
        delivery = self.delivery(envelope, parameters, encoded).encoded()
        if not self.queues.is_fair(envelope.queue):
            return self.queues.open_step(call.id, call.agent_id, delivery)
        return self.queues.add_step(
            call.id, envelope.queue, envelope.priority, call.agent_id, delivery
        )

    def send_again(self, envelope: Envelope) -> None:
        """Put a call whose message was lost on the broker once more (`workers.reaper`).

        Raises:
            redis.RedisError: it was not sent.
        """
        self.delivery(envelope, envelope.redaction()).push(self.queues.client)

    def pump(self, queue: str) -> int:
        """Send the calls `queue`'s workers have room for; returns how many."""
        return len(self.queues.pump(queue)) if self.queues.is_fair(queue) else 0

    def pump_step(self, queue: str) -> Step | None:
        """`pump` as a step of another script (a call's ending: `CallStore.finish`); None
        for a machine's queue, which is not pumped."""
        return self.queues.pump_step(queue) if self.queues.is_fair(queue) else None

    def pump_all(self) -> int:
        """`pump` every shared queue (a worker starting, a reaper's round)."""
        return sum(self.pump(queue) for queue in sorted(FAIR_QUEUES))

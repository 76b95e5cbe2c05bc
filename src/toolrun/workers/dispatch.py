"""Publishing a call on its tool's queue, with its time limits."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any

from celery import Celery
from kombu import Exchange, Queue
from kombu.exceptions import BatchPublishError  # type: ignore[attr-defined]  # kombu 5.7, newer than its stubs

from toolrun.calls.envelope import Envelope
from toolrun.calls.fairness import FAIR_QUEUES, FairQueues, Step
from toolrun.history.records import redact

log = logging.getLogger(__name__)
EXECUTE_TASK = "toolrun.execute"
# The tool's own limit fires first and the sandbox kills its processes: SIGTERM, a grace,
# SIGKILL, then a sweep with another grace and up to 2 s for the cgroup to empty. Celery's
# soft limit (an exception in the task) must wait for all of that, the hard limit (the
# pool child is killed) comes last.
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


def enqueue(
    app: Celery,
    envelope: Envelope,
    *,
    parameters: dict[str, Any] | None,
    kill_grace_s: float,
) -> None:
    """Send an admitted call to the workers of its queue; the Celery task id is the call
    id and the envelope the task's only argument. The message and its task-sent event
    (which Flower reads) go to Redis in one pipeline, one round trip (kombu's publish
    batch), not one each; should that pipeline fail, the call is sent once more the
    usual way, which Celery retries (as when a publish of its own fails, the first try
    may have reached the queue: a call's deliveries are counted when it starts).

    `parameters`: the tool's JSON Schema, which marks the arguments never to be shown.

    Raises:
        kombu's OperationalError: the broker could not be reached.
    """
    call = envelope.call
    soft, hard = time_limits(envelope.time_limit_s, kill_grace_s)
    queue = envelope.queue
    target: str | Queue = queue
    declare = []
    if queue not in app.amqp.queues:  # a machine's queue (`Tool.machine`): declared here,
        # so the message waits in it even before that machine's worker has declared it
        target = Queue(queue, Exchange(queue, "direct"), queue)
        declare.append(target)
    about = {
        "version": call.version,
        "agent_id": call.agent_id,
        "approved_by": envelope.approved_by,
    }

    def send(producer: Any = None) -> None:
        app.send_task(
            EXECUTE_TASK,
            args=[envelope.model_dump(mode="json")],
            task_id=call.id,
            queue=target,  # type: ignore[arg-type]  # Celery takes a Queue (not in its stubs)
            declare=declare,
            soft_time_limit=soft,
            time_limit=hard,
            shadow=f"toolrun.{call.tool_name}",
            # Shown instead of the raw task arguments, which hold the secrets in the payload.
            argsrepr=shown_arguments(call.arguments, parameters),
            kwargsrepr=_truncated(json.dumps(about)),
            producer=producer,
        )

    try:
        with app.producer_or_acquire() as producer, producer.batch():
            send(producer)
    except BatchPublishError as exc:
        log.warning("call %s: its message's pipeline failed (%r); sending it again", call.id, exc)
        send()


@dataclass(frozen=True)
class FairPublisher:
    """The lifecycle's way to queue a call: on a shared queue, in its agent's turn
    (`calls.fairness`); on a machine's queue, a Celery message at once."""

    app: Celery
    queues: FairQueues
    kill_grace_s: float

    def send(self, envelope: Envelope, parameters: dict[str, Any] | None) -> None:
        """Queue an admitted call whose record (with its envelope) is stored.

        Raises:
            redis.RedisError, kombu's OperationalError: the call was not queued.
        """
        call = envelope.call
        if not self.queues.is_fair(envelope.queue):
            self.queues.note_open(call.id, call.agent_id)
            enqueue(self.app, envelope, parameters=parameters, kill_grace_s=self.kill_grace_s)
            return
        taken = self.queues.add(call.id, envelope.queue, envelope.priority, call.agent_id)
        self.publish(taken)

    def place_step(self, envelope: Envelope) -> Step:
        """The step that puts a new call in line, run in the same round trip as its
        record's creation (`calls.queueing`): on a shared queue, in its agent's list, and
        the pump; on a machine's queue, among its agent's open calls."""
        call = envelope.call
        if not self.queues.is_fair(envelope.queue):
            return self.queues.open_step(call.id, call.agent_id)
        return self.queues.add_step(call.id, envelope.queue, envelope.priority, call.agent_id)

    def publish_placed(
        self, envelope: Envelope, parameters: dict[str, Any] | None, handed_out: list[str]
    ) -> None:
        """Send what `place_step` handed out; on a machine's queue, the call itself.

        Raises:
            kombu's OperationalError: a machine's call was not sent.
        """
        if not self.queues.is_fair(envelope.queue):
            enqueue(self.app, envelope, parameters=parameters, kill_grace_s=self.kill_grace_s)
            return
        self.publish(handed_out)

    def pump(self, queue: str) -> int:
        """Send the calls `queue`'s workers have room for; returns how many."""
        return self.publish(self.queues.pump(queue)) if self.queues.is_fair(queue) else 0

    def pump_step(self, queue: str) -> Step | None:
        """`pump` as a step of another script (a call's ending: `CallStore.finish`), whose
        answer goes to `publish`; None for a machine's queue, which is not pumped."""
        return self.queues.pump_step(queue) if self.queues.is_fair(queue) else None

    def pump_all(self) -> int:
        """`pump` every shared queue (a worker starting, a reaper's round)."""
        return sum(self.pump(queue) for queue in sorted(FAIR_QUEUES))

    def publish(self, taken: list[str]) -> int:
        """Send calls taken from the fair queues. They are noted as sent: one whose
        message fails here is sent again by the reapers (`workers.reaper.send_lost`),
        so a failure is logged, not raised (the call is queued either way)."""
        for raw in taken:
            try:
                envelope = Envelope.model_validate_json(raw)
            except ValueError as exc:  # written by another version of toolrun
                log.warning("a call taken for its workers has an unreadable envelope (%r)", exc)
                continue
            try:
                enqueue(
                    self.app,
                    envelope,
                    parameters=envelope.redaction(),
                    kill_grace_s=self.kill_grace_s,
                )
            except Exception as exc:
                log.warning(
                    "call %s taken for its workers but not sent (%r); the reapers send it",
                    envelope.call.id,
                    exc,
                )
        return len(taken)

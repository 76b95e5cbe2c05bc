"""The execute task, and the request class that settles calls whose pool child was killed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import redis
from celery import Celery, Task
from celery.exceptions import Reject
from celery.signals import (
    setup_logging,
    worker_process_init,
    worker_process_shutdown,
)
from celery.worker.request import Request
from pydantic import ValidationError
from structlog.contextvars import bound_contextvars

from toolrun.calls.envelope import Envelope
from toolrun.calls.store import Broadcast
from toolrun.calls.wiring import fair_publisher
from toolrun.monitoring import configure_logging, tracing
from toolrun.sandbox.tracking import kill_labelled, label_for
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.workers.dispatch import FairPublisher
from toolrun.workers.messages import EXECUTE_TASK
from toolrun.workers.runtime import WorkerRuntime
from toolrun.workers.task_events import (
    DeliveryEvents,
    TaskEvents,
    ToolCallFailed,
    publish,
    task_failure,
)

log = logging.getLogger(__name__)
OLDER_MESSAGE = (
    "queued by an older toolrun, whose message this worker no longer reads; nothing ran: "
    "submit the call again"
)
# What a task that ran no tool returns; one that did returns the status (Flower shows it).
UNREAD = "unread message: nothing ran"
REDELIVERY_IGNORED = "already ended: redelivery ignored"


def register_tasks(app: Celery, runtime: WorkerRuntime) -> None:
    """Add `toolrun.execute` to `app`, running calls with `runtime`, and have the worker log
    structured lines (Celery leaves logging alone when `setup_logging` has a receiver)."""

    @setup_logging.connect(weak=False, dispatch_uid="toolrun.structured_logs")
    def structured_logs(loglevel: int | None = None, **_: Any) -> None:
        configure_logging(runtime.settings, level=loglevel or logging.INFO)

    @worker_process_init.connect(weak=False)
    def load_tool_sources(**_: Any) -> None:  # a new pool child: the plugins, kept current
        tracing.setup(runtime.settings, "toolrun-worker")  # when OTEL_* asks for traces
        refresh_tool_sources(runtime)

    @worker_process_shutdown.connect(weak=False)
    def send_last_spans(**_: Any) -> None:
        tracing.shutdown()

    events = TaskEvents(app)

    publisher = fair_publisher(runtime.settings, runtime.store.client, app)

    class ToolRequest(Request):
        """Runs in the worker's main process, which outlives a killed pool child."""

        def on_timeout(self, soft: bool, timeout: float) -> None:
            super().on_timeout(soft, timeout)
            if not soft:  # the pool child was killed: nothing else cleans up or settles
                error = f"hard time limit ({timeout:g} s) hit"
                delivery = events.delivery(self.id, self.hostname)
                queue = _settle(runtime, self.args, ToolStatus.TIMEOUT, error, delivery)
                if queue is not None:
                    _next_call(publisher, queue)

    class ToolTask(Task[Any, str]):
        Request = ToolRequest  # type: ignore[assignment]  # Celery takes a class or a path

    # Not shared: it closes over this runtime, which another app must not inherit.
    @app.task(name=EXECUTE_TASK, base=ToolTask, bind=True, throws=(ToolCallFailed,), shared=False)
    def execute(self: ToolTask, payload: dict[str, Any], *older: Any) -> str:
        """The call's status (Flower's result column); a failure raises ToolCallFailed."""
        request = self.request
        received = events.received(self.name, request)
        delivery = events.delivery(str(request.id), request.hostname, received)
        if older:  # queued before the envelope: the caller learns, nothing runs
            _settle_unread(runtime, str(self.request.id), OLDER_MESSAGE)
            return _returned(runtime, delivery, UNREAD)
        try:
            envelope = Envelope.model_validate(payload)
        except ValidationError as exc:
            error = f"its message could not be read ({exc.error_count()} problems); nothing ran"
            _settle_unread(runtime, str(self.request.id), error)
            return _returned(runtime, delivery, UNREAD)
        call = envelope.call
        try:
            result = runtime.run(envelope, next_calls=publisher, events=delivery)
        except redis.RedisError as exc:
            # The call store is unreachable: hand the message back rather than have it
            # acknowledged as failed, which would leave the call queued or running forever.
            log.warning(
                "call store unreachable (%s); the call will be redelivered",
                exc,
                extra={"call_id": call.id},
            )
            raise Reject(exc, requeue=True) from exc
        except Exception as exc:  # Celery counts the task failed: Flower hears it too
            _announce(runtime, delivery, [delivery.failed(exc)])
            raise
        if result is None:  # nothing ended here; the slot its ending freed may be idle
            _next_call(publisher, envelope.queue)
            _ended_before(runtime, delivery, call.id)
            return REDELIVERY_IGNORED
        failure = task_failure(result)
        if failure is not None:
            raise failure
        return result.status.value


def _returned(runtime: WorkerRuntime, delivery: DeliveryEvents, value: str) -> str:
    """`value`, returned by a task that ended no call, once its events are published."""
    _announce(runtime, delivery, [delivery.returned(value)])
    return value


def _ended_before(runtime: WorkerRuntime, delivery: DeliveryEvents, call_id: str) -> None:
    """Tell Flower how a call whose message was taken after it ended did end (nothing
    started here: no task-received or task-started)."""
    try:
        record = runtime.store.get(call_id)
    except redis.RedisError as exc:  # Flower then shows the task as it last heard of it
        log.warning("the events of %s not sent (%s)", delivery.call_id, exc)
        return
    settled = None if record is None else delivery.settled(record)
    publish(runtime.store.client, delivery.call_id, [settled])


def _announce(
    runtime: WorkerRuntime, delivery: DeliveryEvents, events: list[Broadcast | None]
) -> None:
    """Publish a task's events that no state change of its call carries, after its
    task-received and task-started unless the start script published them."""
    started = [] if delivery.start_published else delivery.started()
    publish(runtime.store.client, delivery.call_id, [*started, *events])


def _settle(
    runtime: WorkerRuntime,
    args: Sequence[Any],
    status: ToolStatus,
    error: str,
    delivery: DeliveryEvents,
) -> str | None:
    """End the call of a message's `args` without running it (again); returns its queue
    (None: not an envelope, settled when it was taken: `_settle_unread`)."""
    if len(args) != 1:
        return None
    envelope = Envelope.model_validate(args[0])
    call = envelope.call
    with bound_contextvars(call_id=call.id):
        log.error("call %s (%s): %s", call.id, call.tool_name, error)
        kill_labelled(label_for(call.id))  # what the killed pool process had started
        result = ToolResult.accepted(call, status, queued_at=envelope.queued_at)
        result.error = error
        runtime.end(call, result, secrets=envelope.redaction(), broadcast=delivery.ended(result))
    return envelope.queue


def _settle_unread(runtime: WorkerRuntime, call_id: str, error: str) -> None:
    """End a call whose message this worker cannot read, as an error, if its record still
    says queued: a call that already ended, or runs elsewhere, is left alone."""
    with bound_contextvars(call_id=call_id):
        log.error("call %s: %s", call_id, error)
        current = runtime.store.get(call_id)
        if current is None or current.status is not ToolStatus.QUEUED:
            return
        current.status = ToolStatus.ERROR
        current.error = error
        call = ToolCall(id=call_id, tool_name=current.tool_name, version=current.tool_version)
        runtime.end(call, current)


def _next_call(publisher: FairPublisher, queue: str) -> None:
    """This call's slot is free: send the next call waiting its turn on `queue`. A pump
    that fails is made up by the next one (another ending, a reaper's round)."""
    try:
        publisher.pump(queue)
    except Exception as exc:
        log.warning("the next calls of %s not sent (%r); a later pump sends them", queue, exc)


def refresh_tool_sources(runtime: WorkerRuntime) -> None:
    """Load the plugins and MCP imports now and keep them current from a thread (a pool
    child starts with the built-ins only); a database that is away is retried there."""
    try:
        runtime.registry.refresh(within_s=0)
    except Exception as exc:
        log.warning("loading the plugins failed (%r); the refresh thread retries", exc)

"""The execute task, and the request class that settles calls whose pool child was killed."""

from __future__ import annotations

import logging
from typing import Any

import redis
from celery import Celery, Task
from celery.exceptions import Reject
from celery.signals import setup_logging, worker_process_shutdown, worker_shutdown
from celery.worker.request import Request
from structlog.contextvars import bound_contextvars

from toolrun.calls.envelope import Envelope
from toolrun.monitoring import configure_logging
from toolrun.sandbox.tracking import kill_labelled, label_for
from toolrun.tools.model import ToolResult, ToolStatus
from toolrun.workers.dispatch import EXECUTE_TASK
from toolrun.workers.runtime import WorkerRuntime

log = logging.getLogger(__name__)


def register_tasks(app: Celery, runtime: WorkerRuntime) -> None:
    """Add `toolrun.execute` to `app`, running calls with `runtime`, and have the worker log
    structured lines (Celery leaves logging alone when `setup_logging` has a receiver)."""

    @setup_logging.connect(weak=False, dispatch_uid="toolrun.structured_logs")
    def structured_logs(loglevel: int | None = None, **_: Any) -> None:
        configure_logging(runtime.settings, level=loglevel or logging.INFO)

    @worker_process_shutdown.connect(weak=False)
    def write_pending_history(**_: Any) -> None:  # a pool child going away
        runtime.history.flush()

    @worker_shutdown.connect(weak=False)
    def write_main_history(**_: Any) -> None:  # rows of calls settled by the main process
        runtime.history.flush()

    class ToolRequest(Request):
        """Runs in the worker's main process, which outlives a killed pool child."""

        def on_timeout(self, soft: bool, timeout: float) -> None:
            super().on_timeout(soft, timeout)
            if not soft:  # the pool child was killed: nothing else cleans up or settles
                _settle(runtime, self, ToolStatus.TIMEOUT, f"hard time limit ({timeout:g} s) hit")

    class ToolTask(Task[Any, None]):
        Request = ToolRequest  # type: ignore[assignment]  # Celery takes a class or a path

    @app.task(name=EXECUTE_TASK, base=ToolTask, bind=True)
    def execute(self: ToolTask, payload: dict[str, Any]) -> None:
        envelope = Envelope.model_validate(payload)
        call = envelope.call
        try:
            runtime.run(envelope)
        except redis.RedisError as exc:
            # The call store is unreachable: hand the message back rather than have it
            # acknowledged as failed, which would leave the call queued or running forever.
            log.warning(
                "call store unreachable (%s); the call will be redelivered",
                exc,
                extra={"call_id": call.id},
            )
            raise Reject(exc, requeue=True) from exc


def _settle(runtime: WorkerRuntime, request: Request, status: ToolStatus, error: str) -> None:
    [payload] = request.args
    envelope = Envelope.model_validate(payload)
    call = envelope.call
    with bound_contextvars(call_id=call.id):
        log.error("call %s (%s): %s", call.id, call.tool_name, error)
        kill_labelled(label_for(call.id))  # what the killed pool process had started
        result = ToolResult(
            call_id=call.id,
            tool_name=call.tool_name,
            tool_version=call.version,
            status=status,
            error=error,
            metadata={
                "agent_id": call.agent_id,
                "queued_at": envelope.queued_at,
                **call.lineage(),
            },
        )
        runtime.end(call, result)

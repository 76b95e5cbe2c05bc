"""The Celery app, built from Settings: one queue per permission level, one for the Task
tool's delegations, and each level's queue on this machine (for calls that need state kept
on one machine); no others."""

from __future__ import annotations

from celery import Celery
from kombu import Exchange, Queue

from toolrun.config import Settings
from toolrun.permissions.levels import QUEUES, PermissionLevel
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.broker import HOLDER_OPTION, TRANSPORT
from toolrun.workers.dispatch import time_limits

# Redis redelivers an unacknowledged message after the visibility timeout; it must exceed
# the longest hard limit or a long call would run twice.
MIN_VISIBILITY_TIMEOUT_S = 3600


def longest_time_limit(registry: ToolRegistry, settings: Settings) -> float:
    """The longest any call of any registered tool may run."""
    return max(tool.max_time_limit_s(settings) for tool in registry.list())


def create_celery_app(
    settings: Settings, *, longest_time_limit_s: float = 600.0, worker: str | None = None
) -> Celery:
    """A Celery app for the broker in `settings`; tasks are added by `toolrun.workers.tasks`.

    `longest_time_limit_s`: the longest any call may run (`longest_time_limit`). `worker`:
    the worker process whose app it is, noted as the holder of each call's message its
    connections take (`workers.broker`), for the reapers.
    """
    if settings.redis_url is None:
        raise ValueError("TOOLRUN_REDIS_URL is not set (toolrun up sets it for its children)")
    app = Celery("toolrun", broker=settings.redis_url, set_as_current=False)
    _soft, hard = time_limits(longest_time_limit_s, settings.kill_grace_s)
    # Also this machine's own queue of each level (`Tool.machine`).
    mine = [level.machine_queue(settings.machine_id) for level in PermissionLevel]
    queues = [*QUEUES, *mine]
    visibility = max(MIN_VISIBILITY_TIMEOUT_S, 2 * hard)
    app.conf.update(
        # An exchange per queue: left to defaults, every queue would be bound to the default
        # queue's exchange and key, and one message would reach all four queues.
        task_queues=[Queue(name, Exchange(name, "direct"), name) for name in queues],
        task_default_queue=PermissionLevel.READ_ONLY.queue_name,
        task_create_missing_queues=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        broker_transport=TRANSPORT,  # kombu's Redis transport, a client per pool
        broker_transport_options={
            "visibility_timeout": visibility,
            **({} if worker is None else {HOLDER_OPTION: worker}),
        },
        broker_connection_retry_on_startup=True,
        task_ignore_result=True,  # results live in the call store, not Celery's backend
        task_serializer="json",
        accept_content=["json"],
        # Task events (which Flower reads) are toolrun's own, sent with the state changes
        # they stand for (`workers.task_events`); Celery's worker sends its heartbeats.
        worker_send_task_events=False,
        task_send_sent_event=True,
        worker_hijack_root_logger=False,
        enable_utc=True,
    )
    return app

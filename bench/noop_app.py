"""The raw Celery baseline: toolrun's Celery settings plus a result backend and a no-op task.

Its worker sends Celery's own task events, as a Celery deployment watched by Flower does
(toolrun's workers send theirs with their scripts instead: `workers.task_events`), on
kombu's own Redis transport (toolrun's reuses its Redis clients: `workers.broker`), so the
baseline is plain Celery, the same as before toolrun changed either.
"""

from __future__ import annotations

import os

from kombu import Exchange, Queue

from toolrun.config import Settings
from toolrun.workers.app import create_celery_app

BROKER = os.environ["BENCH_REDIS_URL"]
# A queue of its own, so that a toolrun worker may run beside it (platform_roundtrip).
NOOP_QUEUE = "bench.noop"
app = create_celery_app(Settings(redis_url=BROKER))
app.conf.update(
    task_queues=[
        *app.conf.task_queues,
        Queue(NOOP_QUEUE, Exchange(NOOP_QUEUE, "direct"), NOOP_QUEUE),
    ],
    result_backend=BROKER,
    task_ignore_result=False,
    worker_send_task_events=True,
    broker_transport=None,  # the URL's: kombu's own
)


@app.task(name="bench.noop")
def noop() -> None:
    """Does nothing: the round trip is all there is to measure."""

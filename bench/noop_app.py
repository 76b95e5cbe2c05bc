"""The raw Celery baseline: toolrun's Celery settings plus a result backend and a no-op task.

Its worker sends Celery's own task events, as a Celery deployment watched by Flower does
(toolrun's workers send theirs with their scripts instead: `workers.task_events`), on
kombu's own Redis transport (toolrun's reuses its Redis clients: `workers.broker`), so the
baseline is plain Celery, the same as before toolrun changed either.
"""

from __future__ import annotations

import os

from toolrun.config import Settings
from toolrun.workers.app import create_celery_app

BROKER = os.environ["BENCH_REDIS_URL"]
app = create_celery_app(Settings(redis_url=BROKER))
app.conf.update(
    result_backend=BROKER,
    task_ignore_result=False,
    worker_send_task_events=True,
    broker_transport=None,  # the URL's: kombu's own
)


@app.task(name="bench.noop")
def noop() -> None:
    """Does nothing: the round trip is all there is to measure."""

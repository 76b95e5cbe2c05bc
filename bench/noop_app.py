"""The raw Celery baseline: toolrun's Celery settings plus a result backend and a no-op task.

Its worker sends Celery's own task events, as a Celery deployment watched by Flower does
(toolrun's workers send theirs with their scripts instead: `workers.task_events`), so the
baseline is the same as before toolrun turned Celery's off.
"""

from __future__ import annotations

import os

from toolrun.config import Settings
from toolrun.workers.app import create_celery_app

BROKER = os.environ["BENCH_REDIS_URL"]
app = create_celery_app(Settings(redis_url=BROKER))
app.conf.update(result_backend=BROKER, task_ignore_result=False, worker_send_task_events=True)


@app.task(name="bench.noop")
def noop() -> None:
    """Does nothing: the round trip is all there is to measure."""

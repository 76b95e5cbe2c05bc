"""A plain Celery app with toolrun's settings whose worker sends Celery's own task events:
what toolrun's workers' events are compared with (`test_task_events`)."""

from __future__ import annotations

import os

from toolrun.config import Settings
from toolrun.workers.app import create_celery_app

app = create_celery_app(Settings(redis_url=os.environ["REFERENCE_BROKER_URL"]))
app.conf.worker_send_task_events = True


class Failed(Exception):
    """What the failing task raises, as toolrun's task raises ToolCallFailed."""


@app.task(name="reference.succeeds")
def succeeds() -> str:
    return "success"


@app.task(name="reference.fails", throws=(Failed,))
def fails() -> None:
    raise Failed("error: nothing to read")

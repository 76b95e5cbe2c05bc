"""Celery workers: the app factory, routing by permission level and the execute task."""

from toolrun.workers.app import create_celery_app
from toolrun.workers.dispatch import time_limits

__all__ = ["create_celery_app", "time_limits"]

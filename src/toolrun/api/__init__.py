"""The HTTP API (FastAPI): validates calls and enqueues them on the workers' queues."""

from toolrun.api.app import create_app

__all__ = ["create_app"]

"""Log lines of the API and workers: one JSON object each (or plain text), carrying the id
of the call being handled.

Every standard-library record (``logging.getLogger(__name__)``, Celery, uvicorn) goes
through structlog's ProcessorFormatter on the root logger's one handler. Whatever is bound
with ``structlog.contextvars`` (``call_id`` while a call is admitted, decided or run) and a
record's ``extra`` fields become keys of the line. Only the API factory and the worker
call `configure_logging`: the CLI keeps its own plain ``logging.basicConfig``.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog
from structlog.typing import Processor

from toolrun.config import Settings

# uvicorn gives these their own handlers; sent to the root's instead, they are JSON too.
_SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")
# Alembic says what it checks each time a process opens the database: warnings only.
_QUIET_LOGGERS = ("alembic",)
_ARGUMENT_KEYS = ("args", "kwargs")


def configure_logging(
    settings: Settings, *, level: int | str = logging.INFO, stream: TextIO | None = None
) -> None:
    """Make the root logger's only handler write structured lines to `stream` (stderr)."""
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(formatter(settings, shared))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in _SERVER_LOGGERS:
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def formatter(settings: Settings, shared: list[Processor]) -> structlog.stdlib.ProcessorFormatter:
    """JSON lines, or plain text for `log_format="console"`; tracebacks without locals."""
    rendering: list[Processor]
    if settings.log_format == "json":
        rendering = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        plain = structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
        rendering = [plain]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder(), without_arguments],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
    )


def without_arguments(
    logger: object, method_name: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """Celery's task lines carry the call's arguments (`data.args`, `data.kwargs`): they
    stay out of the log (the history keeps them, secret ones redacted)."""
    data = event.get("data")
    if isinstance(data, dict) and any(key in data for key in _ARGUMENT_KEYS):
        event["data"] = {k: v for k, v in data.items() if k not in _ARGUMENT_KEYS}
    return event

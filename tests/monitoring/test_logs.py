"""Structured log lines: JSON objects with the bound call id, or plain text."""

from __future__ import annotations

import logging

import structlog
from structlog.contextvars import bound_contextvars

from tests.monitoring.conftest import Configure, lines


def test_standard_library_records_become_json_with_the_call_id(logs: Configure) -> None:
    buffer = logs(log_format="json")

    with bound_contextvars(call_id="c-123"):
        logging.getLogger("toolrun.workers.runtime").warning("stored %s of %d", "result", 3)
    logging.getLogger("toolrun.api").info("after the call")

    during, after = lines(buffer)
    assert during["event"] == "stored result of 3"
    assert during["level"] == "warning"
    assert during["logger"] == "toolrun.workers.runtime"
    assert during["call_id"] == "c-123"
    assert during["timestamp"].endswith("Z")
    assert after["event"] == "after the call"
    assert "call_id" not in after


def test_extra_fields_and_tracebacks_are_keys(logs: Configure) -> None:
    buffer = logs(log_format="json")
    log = logging.getLogger("toolrun.test")

    log.warning("slow call", extra={"tool": "read", "execution_time_ms": 812.5})
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("it failed")

    slow, failed = lines(buffer)
    assert slow["tool"] == "read"
    assert slow["execution_time_ms"] == 812.5
    assert failed["level"] == "error"
    assert "ValueError: boom" in failed["exception"]


def test_structlog_loggers_write_the_same_lines(logs: Configure) -> None:
    buffer = logs(log_format="json")

    with bound_contextvars(call_id="c-9"):
        structlog.stdlib.get_logger("toolrun.native").info("native", rows=2)

    [line] = lines(buffer)
    assert line["event"] == "native"
    assert line["rows"] == 2
    assert line["call_id"] == "c-9"
    assert line["logger"] == "toolrun.native"


def test_console_format_is_plain_text(logs: Configure) -> None:
    buffer = logs(log_format="console")

    with bound_contextvars(call_id="c-1"):
        logging.getLogger("toolrun.test").warning("slow call")

    text = buffer.getvalue()
    assert not text.startswith("{")
    assert "slow call" in text
    assert "call_id=c-1" in text
    assert "[warning" in text


def test_uvicorn_lines_go_through_the_same_handler(logs: Configure) -> None:
    uvicorn = logging.getLogger("uvicorn.error")
    uvicorn.addHandler(logging.NullHandler())  # as uvicorn's own dictConfig leaves it

    buffer = logs(log_format="json")
    uvicorn.warning("server says")

    assert uvicorn.handlers == []
    [line] = lines(buffer)
    assert line["logger"] == "uvicorn.error"


def test_celery_task_lines_leave_the_arguments_out(logs: Configure) -> None:
    buffer = logs(log_format="json")
    data = {"id": "c-1", "name": "toolrun.bash", "args": '{"command": "cat .env"}', "kwargs": "{}"}

    logging.getLogger("celery.app.trace").info("Task %s succeeded", "c-1", extra={"data": data})
    logging.getLogger("alembic.runtime.migration").info("Context impl SQLiteImpl.")

    [line] = lines(buffer)  # alembic's information is not logged
    assert line["data"] == {"id": "c-1", "name": "toolrun.bash"}
    assert "cat .env" not in buffer.getvalue()

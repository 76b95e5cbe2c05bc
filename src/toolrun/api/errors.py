"""Error responses: every failure is a 4xx/503 with a one-line `detail`, never a traceback."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import redis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kombu.exceptions import OperationalError
from sqlalchemy.exc import SQLAlchemyError

from toolrun.errors import CallConflict, CallNotFound, QuotaExceeded, TryLater

log = logging.getLogger(__name__)


def problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    """Validation → 400/422, an unknown call → 404, a call whose state forbids the
    request → 409, over a quota → 429, a full queue → 503 (both with Retry-After), broker
    or database down → 503, anything else → 500 with no internals."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(error.get("type") == "json_invalid" for error in errors):
            return problem(400, "malformed JSON body: " + _first_message(errors))
        return problem(422, "; ".join(_describe(error) for error in errors))

    @app.exception_handler(CallNotFound)
    async def no_such_call(request: Request, exc: CallNotFound) -> JSONResponse:
        return problem(404, str(exc))

    @app.exception_handler(CallConflict)
    async def conflict(request: Request, exc: CallConflict) -> JSONResponse:
        return problem(409, str(exc))

    @app.exception_handler(TryLater)
    async def try_later(request: Request, exc: TryLater) -> JSONResponse:
        status = 429 if isinstance(exc, QuotaExceeded) else 503
        answer = problem(status, str(exc))
        answer.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
        return answer

    @app.exception_handler(redis.RedisError)
    @app.exception_handler(OperationalError)
    async def broker_down(request: Request, exc: Exception) -> JSONResponse:
        log.warning("broker unavailable: %s", exc)
        return problem(503, f"broker unavailable, try again shortly: {type(exc).__name__}")

    @app.exception_handler(SQLAlchemyError)
    async def database_down(request: Request, exc: SQLAlchemyError) -> JSONResponse:
        log.warning("database unavailable: %s", exc)
        return problem(503, f"database unavailable, try again shortly: {type(exc).__name__}")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s: %r", request.method, request.url.path, exc)
        return problem(500, "internal error; it has been logged")


def _describe(error: Mapping[str, Any]) -> str:
    location = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
    message = str(error.get("msg", "invalid"))
    return f"{location}: {message}" if location else message


def _first_message(errors: Sequence[Mapping[str, Any]]) -> str:
    first = errors[0]
    return str(first.get("ctx", {}).get("error", first.get("msg")))

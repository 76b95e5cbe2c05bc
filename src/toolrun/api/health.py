"""GET /healthz: do the broker and the database answer, how are tool processes isolated.

`network` and `filesystem` are "isolated" (the filesystem with its layers: "isolated
(namespaces+landlock+seccomp)"), or name every worker whose tools are not confined so and
why ("execute@host/42 degraded: ..."): degraded is reported, never hidden, but not a 503.
`sandbox_paths` are the extra paths the workers show their tools. `processes`, under
`toolrun up`: each process the supervisor keeps running, its pid, state and restarts.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import redis
from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from toolrun.api.schemas import Health
from toolrun.api.state import ApiState, get_state
from toolrun.calls import keys
from toolrun.database import check_database
from toolrun.embedded.supervisor import STATUS_FILE, read_status
from toolrun.sandbox.confinement import ISOLATED
from toolrun.sandbox.tracking import isolation_kind

router = APIRouter(tags=["health"])
PING_TIMEOUT_S = 2.0


@router.get("/healthz", response_model=Health, responses={503: {"model": Health}})
async def healthz(state: Annotated[ApiState, Depends(get_state)]) -> JSONResponse:
    """200 when the broker and the database answer, 503 when either does not."""
    try:
        await asyncio.wait_for(state.redis.ping(), PING_TIMEOUT_S)
        broker = "ok"
    except (TimeoutError, redis.RedisError, OSError) as exc:
        broker = f"unavailable: {type(exc).__name__}"
    try:
        await asyncio.wait_for(run_in_threadpool(check_database, state.database), PING_TIMEOUT_S)
        database = "ok"
    except (TimeoutError, SQLAlchemyError, OSError) as exc:
        database = f"unavailable: {type(exc).__name__}"
    healthy = broker == database == "ok"
    network = await _network(state) if broker == "ok" else "unknown"
    filesystem, paths = await _filesystem(state) if broker == "ok" else ("unknown", {})
    health = Health(
        status="ok" if healthy else "unhealthy",
        redis=broker,
        database=database,
        sandbox=isolation_kind(use_cgroups=state.settings.use_cgroups),
        network=network,
        filesystem=filesystem,
        sandbox_paths=paths,
        processes=read_status(state.settings.platform_home / STATUS_FILE),
    )
    return JSONResponse(health.model_dump(), status_code=200 if healthy else 503)


async def _network(state: ApiState) -> str:
    """isolated when every worker jails its tools' network; else which are degraded, why."""
    return _summary(await _reports(state, keys.NETWORK))


async def _filesystem(state: ApiState) -> tuple[str, dict[str, list[str]]]:
    """How the workers confine their tools' view of files, and the extra paths shown."""
    found = await _reports(state, keys.FILESYSTEM)
    reports = {worker: json.loads(value) for worker, value in found.items()}
    paths: dict[str, list[str]] = {"read_only": [], "read_write": []}
    for report in reports.values():
        for kind, shown in paths.items():
            shown += [p for p in report.get(f"{kind}_paths", []) if p not in shown]
    return _summary({worker: r.get("filesystem", "") for worker, r in reports.items()}), paths


async def _reports(state: ApiState, prefix: str) -> dict[str, str]:
    reports = {}
    async for key in state.redis.scan_iter(f"{prefix}:*"):
        value = await state.redis.get(key)
        if value is not None:
            reports[_text(key).removeprefix(f"{prefix}:")] = _text(value)
    return reports


def _summary(reports: dict[str, str]) -> str:
    """The one state every worker reports, else each worker that is not isolated, why."""
    if not reports:
        return "unknown: no worker has reported"
    degraded = sorted(
        f"{worker} {why}" for worker, why in reports.items() if not why.startswith(ISOLATED)
    )
    if degraded:
        return "; ".join(degraded)
    states = sorted(set(reports.values()))
    return states[0] if len(states) == 1 else "; ".join(states)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

"""GET /metrics: the platform's Prometheus metrics, for operators.

Counters are shared through Redis by every API and worker process, so any API process
answers for the whole platform. The route needs an operator (or admin) token; Prometheus
scrapes it with::

    scrape_configs:
      - job_name: toolrun
        metrics_path: /metrics
        authorization: {credentials: <token>}   # type defaults to Bearer
        static_configs: [{targets: ["toolrun-api:8000"]}]
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from toolrun.api.auth import Operator
from toolrun.api.state import ApiState, get_state
from toolrun.embedded.supervisor import STATUS_FILE
from toolrun.monitoring.reading import read_platform

router = APIRouter(tags=["monitoring"])


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus text format"},
        503: {"description": "Broker or database unavailable"},
    },
)
async def metrics(state: Annotated[ApiState, Depends(get_state)], operator: Operator) -> Response:
    """Calls ended by tool and status, execution times, queue depths and bound, pending
    approvals and the oldest's age, each agent's calls queued and in flight, calls refused
    by quotas, and under `toolrun up` its processes' restarts."""
    collector = await read_platform(
        state.redis,
        inbox=state.inbox,
        agents=state.agents,
        queue_bound=state.settings.queue_bound,
        status_file=state.settings.platform_home / STATUS_FILE,
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

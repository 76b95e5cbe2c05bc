"""Node calls through the platform's lifecycle (real Redis, the broker too, a SQLite
database, no worker): a plan's nodes are batch work, queued behind the calls agents wait
for (`calls.fairness`)."""

from __future__ import annotations

import redis
from sqlalchemy.engine import Engine

from toolrun.calls import keys
from toolrun.calls.envelope import Priority
from toolrun.calls.fairness import agent_key
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import platform_endings, platform_lifecycle
from toolrun.config import Settings
from toolrun.dag import parse_plan
from toolrun.scheduler.dispatch import Admitted, NodeDispatcher
from toolrun.tools import ToolRegistry
from toolrun.workers.app import create_celery_app


def test_a_plans_nodes_are_queued_as_batch_work(
    settings: Settings,
    registry: ToolRegistry,
    engine: Engine,
    redis_url: str,
    redis_client: redis.Redis,
) -> None:
    ended = platform_endings(settings, CallStore(redis_client, ttl_s=600), None)
    celery = create_celery_app(settings.model_copy(update={"redis_url": redis_url}))
    lifecycle = platform_lifecycle(
        settings, registry, client=redis_client, database=engine, celery=celery, ended=ended
    )
    dispatcher = NodeDispatcher(lifecycle)
    plan = parse_plan({"nodes": [{"id": "n", "tool": "read", "arguments": {"file_path": "a"}}]})
    call_id = keys.dag_call("run1", "n", 1)

    admitted = dispatcher.prepare(plan.node("n"), call_id, None, {}, None)
    assert isinstance(admitted, Admitted)
    dispatcher.send(admitted)

    assert admitted.envelope.priority is Priority.BATCH
    queue = admitted.envelope.queue
    agent = agent_key(None)
    batch = f"{keys.fair_ring(queue, Priority.BATCH)}:agent:{agent}"
    interactive = f"{keys.fair_ring(queue, Priority.INTERACTIVE)}:agent:{agent}"
    assert redis_client.lrange(batch, 0, -1) == [call_id.encode()]  # no worker: it waits
    assert redis_client.llen(interactive) == 0

"""The lifecycle wired to the platform: Redis for call records, Celery for the queues, the
database for the approval inbox, rules, security log and history."""

from __future__ import annotations

import redis
from celery import Celery
from sqlalchemy.engine import Engine

from toolrun.calls.endings import STORE_RETRY_DELAYS_S, Endings, Subscriber
from toolrun.calls.fairness import FairQueues
from toolrun.calls.lifecycle import Lifecycle
from toolrun.calls.quotas import QuotaGate
from toolrun.calls.store import CallStore
from toolrun.calls.traced import TracedLifecycle
from toolrun.config import Settings
from toolrun.monitoring import CallMonitor, tracing
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.inbox import ApprovalInbox
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.rules import RuleBook
from toolrun.permissions.security_log import SecurityLog
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.dispatch import FairPublisher
from toolrun.workers.messages import Messages
from toolrun.workers.presence import has_workers


def platform_endings(
    settings: Settings, calls: CallStore, history: Subscriber | None, *, patient: bool = True
) -> Endings:
    """How calls end on the platform: stored with their counters, then their history row
    and slow-call warning. `history` writes the row (the API, the scheduler); None: the
    row goes to the outbox with the final state (workers, see `calls.outbox`). `patient`:
    ride out a Redis restart of a few seconds (a worker, the scheduler), or fail at once
    (an API request, which answers 503)."""
    monitor = CallMonitor(slow_call_ms=settings.slow_call_ms)
    delays = STORE_RETRY_DELAYS_S if patient else ()
    subscribers: list[Subscriber] = [monitor] if history is None else [history, monitor]
    return Endings(
        calls,
        subscribers,
        counters=[monitor.count],
        retry_delays_s=delays,
        outbox=history is None,
    )


def platform_lifecycle(
    settings: Settings,
    tools: ToolRegistry,
    *,
    client: redis.Redis,
    database: Engine,
    celery: Celery,
    ended: Endings,
) -> Lifecycle:
    """A lifecycle on the platform's Redis (`client`), broker (`celery`) and `database`;
    `ended` stores its calls' final states (`platform_endings`); with spans when this
    process has traces on (`monitoring.tracing.setup`)."""

    def present(machine: str, level: PermissionLevel) -> bool:
        return has_workers(client, machine, level)

    kind = TracedLifecycle if tracing.enabled() else Lifecycle
    return kind(
        settings=settings,
        tools=tools,
        calls=ended.store,
        endings=ended,
        publisher=fair_publisher(settings, client, celery),
        presence=present,
        inbox=ApprovalInbox(database),
        rules=RuleBook(database),
        security=SecurityLog(database),
        agents=AgentStore(database),
        quotas=QuotaGate(client, queue_bound=settings.queue_bound),
    )


def fair_queues(settings: Settings, client: redis.Redis) -> FairQueues:
    """The calls waiting their agents' turns on the shared queues (`calls.fairness`)."""
    return FairQueues(client, ahead=settings.dispatch_ahead, batch_every=settings.batch_every)


def fair_publisher(settings: Settings, client: redis.Redis, celery: Celery) -> FairPublisher:
    """How calls reach the workers: in their agents' turns (`calls.fairness`)."""
    return FairPublisher(
        Messages(celery), fair_queues(settings, client), kill_grace_s=settings.kill_grace_s
    )

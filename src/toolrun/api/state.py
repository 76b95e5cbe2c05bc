"""What the API's routes share: settings, registry, broker, call store, database stores."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import redis.asyncio as aioredis
from celery import Celery
from fastapi import Request
from sqlalchemy.engine import Engine

from toolrun.calls.fairness import FairQueues
from toolrun.calls.lifecycle import Lifecycle
from toolrun.calls.store import AsyncCallStore
from toolrun.config import Settings
from toolrun.history import HistoryStore
from toolrun.permissions.agents import AgentStore, TokenCache
from toolrun.permissions.inbox import ApprovalInbox
from toolrun.permissions.rules import RuleBook
from toolrun.permissions.security_log import SecurityLog
from toolrun.permissions.warnings import AgentWarnings
from toolrun.scheduler.store import RunStore
from toolrun.selection.model_steps import ModelSteps
from toolrun.selection.preferences import Preferences
from toolrun.subagents.catalog import SubAgentStore
from toolrun.tools.base import ToolContext
from toolrun.tools.registry import ToolRegistry


@dataclass
class ApiState:
    """Created at start-up, closed at shutdown."""

    settings: Settings
    registry: ToolRegistry
    celery: Celery
    redis: aioredis.Redis
    store: AsyncCallStore  # reads and waits on the event loop; the lifecycle writes
    lifecycle: Lifecycle
    queues: FairQueues  # the calls waiting their agents' turns (`calls.fairness`)
    context: ToolContext  # the workspace, for the sub-agent catalog
    # Admission blocks (Redis round trips on the synchronous client), so it runs off the
    # event loop, on a few long-lived threads of its own. Approvals and the expiry sweep
    # run on anyio's pool, never in its way.
    admission: ThreadPoolExecutor
    database: Engine
    agents: AgentStore
    tokens: TokenCache
    inbox: ApprovalInbox
    rules: RuleBook
    security: SecurityLog
    history: HistoryStore
    runs: RunStore
    warnings: AgentWarnings
    subagents: SubAgentStore
    preferences: Preferences
    selection_model: ModelSteps | None  # steps 2 and 5 by a model, where one is configured


async def get_state(request: Request) -> ApiState:
    """The app's state. A coroutine on purpose: FastAPI runs a plain-function dependency
    on its thread pool, a thread hop on every request for one attribute read."""
    state: ApiState = request.app.state.toolrun
    return state

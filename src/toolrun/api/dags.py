"""DAG routes: submit a plan (validated before anything runs), follow its run, cancel it.

The API only creates runs and records cancel requests; the scheduler does the rest and
is told through the wake list.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from toolrun.api.auth import Agent
from toolrun.api.state import ApiState, get_state
from toolrun.calls import keys
from toolrun.dag import PlanError, dependencies, parse_plan, plan_problems
from toolrun.dag.plan import Plan
from toolrun.dag.run import NodeState, RunStatus
from toolrun.monitoring import tracing
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.roles import Role
from toolrun.scheduler.store import DagNodeRecord, DagRunRecord, RunExists

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"  # ids of runs already stored
router = APIRouter(prefix="/v1/dags", tags=["dags"])
State = Annotated[ApiState, Depends(get_state)]
RunId = Annotated[str, Path(pattern=RUN_ID_PATTERN)]


class DagRequest(BaseModel):
    """A plan to run (see docs/dags.md for the format)."""

    model_config = ConfigDict(extra="forbid")

    plan: dict[str, Any]
    id: str | None = Field(
        None,
        pattern=RUN_ID_PATTERN,
        max_length=keys.MAX_RUN_ID_CHARS,
        description="Run id; generated if absent.",
    )


class NodeView(BaseModel):
    id: str
    tool: str
    version: str | None
    state: str
    attempts: int
    call_id: str | None
    depends_on: list[str]
    started_at: float | None
    finished_at: float | None
    not_before: float | None
    output: Any = None
    error: str | None


class RunView(BaseModel):
    """A run and where each of its nodes is; the run is over when status != running."""

    id: str
    agent_id: str | None
    status: str
    created_at: float
    finished_at: float | None
    error: str | None
    cancel_requested: bool
    max_concurrency: int | None
    counts: dict[str, int]
    warnings: list[str] = []  # e.g. a node whose tool was removed since the run began
    nodes: list[NodeView] | None = None


class RunList(BaseModel):
    runs: list[RunView]


@router.post(
    "",
    status_code=201,
    response_model=RunView,
    responses={
        200: {"model": RunView, "description": "This plan was sent before"},
        409: {},
        422: {},
    },
)
async def submit_plan(body: DagRequest, state: State, agent: Agent) -> Any:
    """Validate a plan (every problem listed: cycles, unknown tools and nodes, bad
    references, arguments the schemas refuse, tools above the agent's ceiling) and start
    a run of it. The same plan sent again under its run id (a retry) answers 200 with that
    run; another plan, or another agent, under a taken id is a 409."""
    try:
        plan = parse_plan(body.plan)
    except PlanError as exc:
        return _invalid(exc.problems)
    problems = plan_problems(plan, state.registry, agent)
    if problems:
        return _invalid(problems)
    run_id = body.id or uuid.uuid4().hex
    try:
        # This request's trace (a child of the agent's): the scheduler's node spans join it.
        trace = tracing.carrier()
        await run_in_threadpool(state.runs.create, run_id, agent.id, plan, trace)
    except RunExists as exc:
        stored = await run_in_threadpool(state.runs.get, run_id)
        if stored is None or not _same_run(stored[0], agent, plan):
            raise HTTPException(
                409, f"a run with id {run_id!r} already exists with a different plan"
            ) from exc
        view = await _view(state, agent, run_id)
        return JSONResponse(view.model_dump(mode="json"), status_code=200)
    await state.redis.rpush(keys.SCHEDULER_WAKE, run_id)
    return await _view(state, agent, run_id)


@router.get("", response_model=RunList)
async def list_runs(
    state: State,
    agent: Agent,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> RunList:
    """Runs, newest first: an agent's own, or every agent's for operators."""
    agent_id = None if agent.role.includes(Role.OPERATOR) else agent.id
    runs = await run_in_threadpool(state.runs.list, status=status, agent_id=agent_id, limit=limit)
    counts = await run_in_threadpool(state.runs.node_counts, [run.id for run in runs])
    return RunList(runs=[_run_view(run, counts[run.id]) for run in runs])


@router.get("/{run_id}", response_model=RunView, responses={404: {}})
async def get_run(run_id: RunId, state: State, agent: Agent) -> RunView:
    """A run with every node's state, attempts, timings, output and error."""
    return await _view(state, agent, run_id)


@router.post(
    "/{run_id}/cancel", status_code=202, response_model=RunView, responses={404: {}, 409: {}}
)
async def cancel_run(run_id: RunId, state: State, agent: Agent) -> RunView:
    """Ask the scheduler to cancel the run: nodes not started are cancelled, calls still
    queued are withdrawn, running ones finish but are ignored."""
    view = await _view(state, agent, run_id)
    if view.status != RunStatus.RUNNING:
        raise HTTPException(409, f"run {run_id} has already ended ({view.status})")
    await run_in_threadpool(state.runs.request_cancel, run_id)
    await state.redis.rpush(keys.SCHEDULER_WAKE, keys.CANCEL_PREFIX + run_id)
    return await _view(state, agent, run_id)


def _invalid(problems: list[str]) -> JSONResponse:
    detail = "invalid plan: " + "; ".join(problems)
    return JSONResponse({"detail": detail, "problems": problems}, status_code=422)


async def _view(state: ApiState, agent: AgentProfile, run_id: str) -> RunView:
    found = await run_in_threadpool(state.runs.get, run_id)
    if found is None or not _visible(found[0], agent):
        raise HTTPException(404, f"no run with id {run_id!r}")
    run, nodes = found
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.state] = counts.get(node.state, 0) + 1
    view = _run_view(run, counts)
    view.nodes = _node_views(run, nodes)
    view.warnings = _missing_tools(state, run, nodes)
    return view


def _missing_tools(state: ApiState, run: DagRunRecord, nodes: list[DagNodeRecord]) -> list[str]:
    """Nodes not yet ended whose tool (at their version) is no longer registered."""
    plan = parse_plan(run.plan)
    waiting = {node.node_id for node in nodes if not NodeState(node.state).final}
    return [
        f"node {node.id}: tool {node.tool}{'@' + node.version if node.version else ''} is no "
        "longer registered; the node will fail"
        for node in plan.nodes
        if node.id in waiting and state.registry.get(node.tool, node.version) is None
    ]


def _same_run(run: DagRunRecord, agent: AgentProfile, plan: Plan) -> bool:
    """Whether `run` is this agent's run of `plan` (as `RunStore.create` stored it)."""
    return run.agent_id == agent.id and run.plan == plan.model_dump(mode="json", exclude_none=True)


def _visible(run: DagRunRecord, agent: AgentProfile) -> bool:
    return agent.role.includes(Role.OPERATOR) or run.agent_id == agent.id


def _run_view(run: DagRunRecord, counts: dict[str, int]) -> RunView:
    return RunView(
        id=run.id,
        agent_id=run.agent_id,
        status=run.status,
        created_at=run.created_at,
        finished_at=run.finished_at,
        error=run.error,
        cancel_requested=run.cancel_requested,
        max_concurrency=run.plan.get("max_concurrency"),
        counts=counts,
    )


def _node_views(run: DagRunRecord, nodes: list[DagNodeRecord]) -> list[NodeView]:
    plan = parse_plan(run.plan)
    graph = dependencies(plan)
    tools = {node.id: node.tool for node in plan.nodes}
    return [
        NodeView(
            id=node.node_id,
            tool=tools[node.node_id],
            version=node.tool_version,
            state=node.state,
            attempts=node.attempts,
            call_id=node.call_id,
            depends_on=sorted(graph[node.node_id]),
            started_at=node.dispatched_at,
            finished_at=node.finished_at,
            not_before=node.not_before,
            output=node.output,
            error=node.error,
        )
        for node in nodes
    ]

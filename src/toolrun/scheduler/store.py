"""Runs of DAG plans in the database: created by the API, advanced by the scheduler alone.

The API writes a run and its nodes once (all pending) and may set `cancel_requested`;
every later change of a node or of the run's status is the scheduler's.
"""

from __future__ import annotations

import builtins
import dataclasses
import time
from collections.abc import Iterable
from typing import Any

from sqlalchemy import JSON, Column, bindparam, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, col, select

from toolrun.dag.plan import Plan
from toolrun.dag.run import NodeRun, NodeState, RunProgress, RunStatus


class DagRunRecord(SQLModel, table=True):
    """One submitted plan."""

    __tablename__ = "dag_runs"

    id: str = Field(primary_key=True)
    agent_id: str | None = Field(default=None, index=True)
    plan: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    status: str = Field(default=RunStatus.RUNNING.value, index=True)
    created_at: float
    finished_at: float | None = None
    error: str | None = None
    cancel_requested: bool = False
    # The request's trace context (W3C headers) when it was traced: one trace per run.
    trace: dict[str, str] | None = Field(default=None, sa_column=Column(JSON))


class DagNodeRecord(SQLModel, table=True):
    """One node of a run: the fields of `NodeRun`, plus its place in the plan."""

    __tablename__ = "dag_nodes"

    run_id: str = Field(primary_key=True, foreign_key="dag_runs.id")
    node_id: str = Field(primary_key=True)
    position: int
    state: str = NodeState.PENDING.value
    attempts: int = 0
    call_id: str | None = None
    tool_version: str | None = None
    arguments: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    output: Any = Field(default=None, sa_column=Column(JSON))
    error: str | None = None
    dispatched_at: float | None = None
    finished_at: float | None = None
    not_before: float | None = None


class RunExists(Exception):
    """A run with this id is already stored."""


class RunStore:
    """DAG runs in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(
        self,
        run_id: str,
        agent_id: str | None,
        plan: Plan,
        trace: dict[str, str] | None = None,
    ) -> DagRunRecord:
        """Store a new run, every node pending; `trace`: the trace it belongs to.

        Raises:
            RunExists: the id is taken.
        """
        run = DagRunRecord(
            id=run_id,
            agent_id=agent_id,
            plan=plan.model_dump(mode="json", exclude_none=True),
            created_at=time.time(),
            trace=trace or None,
        )
        nodes = [
            DagNodeRecord(run_id=run_id, node_id=node.id, position=index)
            for index, node in enumerate(plan.nodes)
        ]
        try:
            with Session(self.engine, expire_on_commit=False) as session:
                session.add(run)
                session.flush()  # the run first: the nodes refer to it
                session.add_all(nodes)
                session.commit()
        except IntegrityError as exc:
            raise RunExists(run_id) from exc
        return run

    def get(self, run_id: str) -> tuple[DagRunRecord, list[DagNodeRecord]] | None:
        with Session(self.engine) as session:
            run = session.get(DagRunRecord, run_id)
            if run is None:
                return None
            nodes = session.exec(
                select(DagNodeRecord)
                .where(DagNodeRecord.run_id == run_id)
                .order_by(col(DagNodeRecord.position))
            ).all()
            return run, list(nodes)

    def list(
        self, *, status: RunStatus | None = None, agent_id: str | None = None, limit: int = 50
    ) -> list[DagRunRecord]:
        """Runs, newest first."""
        query = select(DagRunRecord).order_by(col(DagRunRecord.created_at).desc()).limit(limit)
        if status is not None:
            query = query.where(DagRunRecord.status == status.value)
        if agent_id is not None:
            query = query.where(DagRunRecord.agent_id == agent_id)
        with Session(self.engine) as session:
            return list(session.exec(query).all())

    def node_counts(self, run_ids: Iterable[str]) -> dict[str, dict[str, int]]:
        """Per run: how many nodes are in each state."""
        counts: dict[str, dict[str, int]] = {run_id: {} for run_id in run_ids}
        query = select(DagNodeRecord.run_id, DagNodeRecord.state).where(
            col(DagNodeRecord.run_id).in_(list(counts))
        )
        with Session(self.engine) as session:
            for run_id, state in session.exec(query):
                counts[run_id][state] = counts[run_id].get(state, 0) + 1
        return counts

    def request_cancel(self, run_id: str) -> bool:
        """Ask the scheduler to cancel a running run; False when it is not running."""
        query = (
            update(DagRunRecord)
            .where(col(DagRunRecord.id) == run_id, col(DagRunRecord.status) == "running")
            .values(cancel_requested=True)
        )
        with self.engine.begin() as connection:
            return connection.execute(query).rowcount > 0

    def waiting_on(self, tool: str) -> builtins.list[tuple[str, str | None, builtins.list[str]]]:
        """Running runs with nodes on `tool` not yet ended: (run id, agent, node ids)."""
        found = []
        with Session(self.engine) as session:
            runs = session.exec(select(DagRunRecord).where(DagRunRecord.status == "running"))
            for run in runs:
                on_tool = {node["id"] for node in run.plan["nodes"] if node["tool"] == tool}
                if not on_tool:
                    continue
                nodes = session.exec(
                    select(DagNodeRecord.node_id, DagNodeRecord.state).where(
                        DagNodeRecord.run_id == run.id
                    )
                )
                waiting = sorted(
                    node_id
                    for node_id, state in nodes
                    if node_id in on_tool and not NodeState(state).final
                )
                if waiting:
                    found.append((run.id, run.agent_id, waiting))
        return found

    def running_ids(self) -> builtins.list[str]:
        query = select(DagRunRecord.id).where(DagRunRecord.status == RunStatus.RUNNING.value)
        with Session(self.engine) as session:
            return list(session.exec(query).all())

    def load(self, run_id: str) -> tuple[DagRunRecord, RunProgress] | None:
        """A run as the scheduler works on it."""
        found = self.get(run_id)
        if found is None:
            return None
        run, nodes = found
        progress = RunProgress(
            Plan.model_validate(run.plan),
            {node.node_id: _node_run(node) for node in nodes},
            status=RunStatus(run.status),
            error=run.error,
        )
        return run, progress

    def save(self, run_id: str, progress: RunProgress, changed: Iterable[str]) -> None:
        """Store the nodes in `changed` and the run's status, in one transaction."""
        rows = [_node_values(progress.nodes[node_id]) for node_id in sorted(changed)]
        ended = progress.status is not RunStatus.RUNNING
        with self.engine.begin() as connection:
            if rows:
                table = DagNodeRecord.__table__  # type: ignore[attr-defined]
                statement = (
                    table.update()
                    .where(table.c.run_id == run_id, table.c.node_id == bindparam("b_node_id"))
                    .values({name: bindparam(f"b_{name}") for name in _NODE_FIELDS})
                )
                connection.execute(statement, [{f"b_{k}": v for k, v in r.items()} for r in rows])
            connection.execute(
                update(DagRunRecord)
                .where(col(DagRunRecord.id) == run_id)
                .values(
                    status=progress.status.value,
                    error=progress.error,
                    finished_at=time.time() if ended else None,
                )
            )

    def abort(self, run_id: str, reason: str) -> None:
        """Fail a running run as it is stored, without reading its plan: every node not
        yet ended is cancelled."""
        now = time.time()
        ended = [state.value for state in NodeState if state.final]
        with self.engine.begin() as connection:
            connection.execute(
                update(DagNodeRecord)
                .where(col(DagNodeRecord.run_id) == run_id, col(DagNodeRecord.state).not_in(ended))
                .values(state=NodeState.CANCELLED.value, error=reason, finished_at=now)
            )
            connection.execute(
                update(DagRunRecord)
                .where(
                    col(DagRunRecord.id) == run_id,
                    col(DagRunRecord.status) == RunStatus.RUNNING.value,
                )
                .values(status=RunStatus.FAILED.value, error=reason, finished_at=now)
            )

    def cancel_requested(self, run_id: str) -> bool:
        with Session(self.engine) as session:
            run = session.get(DagRunRecord, run_id)
            return run is not None and run.cancel_requested


_NODE_FIELDS = tuple(f.name for f in dataclasses.fields(NodeRun) if f.name != "node_id")


def _node_run(node: DagNodeRecord) -> NodeRun:
    values = {name: getattr(node, name) for name in _NODE_FIELDS}
    values["state"] = NodeState(values["state"])
    return NodeRun(node_id=node.node_id, **values)


def _node_values(run: NodeRun) -> dict[str, Any]:
    values = {name: getattr(run, name) for name in _NODE_FIELDS}
    values["state"] = run.state.value
    values["node_id"] = run.node_id
    return values

"""A plan's run as a state machine over its nodes (pure: the scheduler does the I/O).

Node states: pending (waits for dependencies), ready (may be dispatched: now, or at
`not_before` for a retry), running (its call is queued, running or awaiting approval),
and the final ones: succeeded, failed, skipped, upstream_failed, cancelled.

On a node's failure its policy applies: retry (again after a delay, while attempts last;
then `on_exhausted`), skip (the node's descendants are skipped, other branches go on) or
stop (the run fails: nodes downstream of the failure become upstream_failed, every other
node not yet ended is cancelled). A run ends succeeded when every node succeeded, failed
when any failed, cancelled when cancelled.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from toolrun.dag.graph import Graph, dependencies, dependents, descendants, topological_order
from toolrun.dag.plan import FailurePolicy, Plan


class NodeState(StrEnum):
    PENDING = "pending"
    READY = "ready"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    UPSTREAM_FAILED = "upstream_failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        return self not in (NodeState.PENDING, NodeState.READY, NodeState.RUNNING)


class RunStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass
class NodeRun:
    """Where one node is; the scheduler stores these fields as they are."""

    node_id: str
    state: NodeState = NodeState.PENDING
    attempts: int = 0  # attempts dispatched so far
    call_id: str | None = None  # the current (or last) attempt's call
    tool_version: str | None = None
    arguments: dict[str, Any] | None = None  # resolved arguments of the last attempt
    output: Any = None
    error: str | None = None
    dispatched_at: float | None = None
    finished_at: float | None = None
    not_before: float | None = None  # a ready node waiting out a retry delay


@dataclass
class RunProgress:
    """The nodes of one run and what happens to them; every method returns the node ids
    whose state it changed, for the scheduler to store."""

    plan: Plan
    nodes: dict[str, NodeRun]
    status: RunStatus = RunStatus.RUNNING
    error: str | None = None
    graph: Graph = field(init=False)
    users: Graph = field(init=False)  # the reverse graph
    order: list[str] = field(init=False)
    rng: random.Random = field(default_factory=random.Random)
    unfinished: int = field(init=False)  # nodes not in a final state

    def __post_init__(self) -> None:
        self.graph = dependencies(self.plan)
        self.users = dependents(self.graph)
        self.order = topological_order(self.graph)
        self.unfinished = sum(not run.state.final for run in self.nodes.values())

    @classmethod
    def start(cls, plan: Plan) -> RunProgress:
        return cls(plan, {node.id: NodeRun(node.id) for node in plan.nodes})

    @property
    def running(self) -> list[NodeRun]:
        return [run for run in self.nodes.values() if run.state is NodeState.RUNNING]

    def promote(self, node_ids: Iterable[str] | None = None) -> set[str]:
        """Pending nodes (among `node_ids`, default all) whose dependencies all succeeded
        become ready."""
        changed = set()
        for node_id in self.order if node_ids is None else node_ids:
            run = self.nodes[node_id]
            if run.state is NodeState.PENDING and all(
                self.nodes[needed].state is NodeState.SUCCEEDED for needed in self.graph[node_id]
            ):
                run.state = NodeState.READY
                changed.add(node_id)
        return changed

    def dispatchable(self, now: float) -> list[str]:
        """Ready nodes to dispatch now, in plan order, within max_concurrency."""
        if self.status is not RunStatus.RUNNING:
            return []
        room = self.plan.max_concurrency
        if room is not None:
            room -= len(self.running)
        found: list[str] = []
        for node_id in self.order:
            run = self.nodes[node_id]
            if run.state is NodeState.READY and (run.not_before or 0) <= now:
                if room is not None and len(found) >= room:
                    break
                found.append(node_id)
        return found

    def next_retry_at(self) -> float | None:
        waits = [
            run.not_before
            for run in self.nodes.values()
            if run.state is NodeState.READY and run.not_before is not None
        ]
        return min(waits, default=None)

    def dispatched(self, node_id: str, call_id: str, now: float) -> None:
        run = self.nodes[node_id]
        run.state = NodeState.RUNNING
        run.attempts += 1
        run.call_id = call_id
        run.dispatched_at = now
        run.not_before = None
        run.output = None
        run.error = None

    def succeeded(self, node_id: str, output: Any, now: float) -> set[str]:
        run = self.nodes[node_id]
        self._finish(run, NodeState.SUCCEEDED, now)
        run.output = output
        run.error = None
        changed = {node_id} | self.promote(sorted(self.users[node_id]))
        self._settle()
        return changed

    def failed(self, node_id: str, error: str, now: float, *, retryable: bool = True) -> set[str]:
        """The node's attempt failed: retry it, or apply its skip / stop policy."""
        node = self.plan.node(node_id)
        run = self.nodes[node_id]
        run.error = error
        policy = self.plan.on_failure(node)
        if policy is FailurePolicy.RETRY:
            retry = self.plan.retry(node)
            if retryable and run.attempts < retry.max_attempts:
                run.state = NodeState.READY
                run.not_before = now + retry.delay_s(run.attempts, self.rng)
                return {node_id}
            policy = retry.on_exhausted
        self._finish(run, NodeState.FAILED, now)
        changed = {node_id}
        downstream = descendants(self.users, node_id)
        if policy is FailurePolicy.SKIP:
            changed |= self._end(downstream, NodeState.SKIPPED, f"skipped: {node_id} failed", now)
        else:
            self.error = f"node {node_id} failed: {error}"
            reason = f"upstream node {node_id} failed"
            changed |= self._end(downstream, NodeState.UPSTREAM_FAILED, reason, now)
            changed |= self._end(
                set(self.nodes), NodeState.CANCELLED, "run stopped: " + reason, now
            )
            self.status = RunStatus.FAILED
        self._settle()
        return changed

    def cancel(self, now: float) -> set[str]:
        """Cancel every node not yet ended (running calls are left to be revoked)."""
        if self.status is not RunStatus.RUNNING:
            return set()
        changed = self._end(set(self.nodes), NodeState.CANCELLED, "run cancelled", now)
        self.status = RunStatus.CANCELLED
        self.error = "cancelled"
        return changed

    def _end(self, node_ids: set[str], state: NodeState, error: str, now: float) -> set[str]:
        changed = set()
        for node_id in node_ids:
            run = self.nodes[node_id]
            if not run.state.final:
                self._finish(run, state, now)
                run.error = error
                changed.add(node_id)
        return changed

    def _finish(self, run: NodeRun, state: NodeState, now: float) -> None:
        """Move a node to a final state, keeping count of those not ended."""
        if not run.state.final:
            self.unfinished -= 1
        run.state = state
        run.finished_at = now

    def _settle(self) -> None:
        """End the run when every node has ended."""
        if self.status is RunStatus.RUNNING and self.unfinished == 0:
            failed = sorted(i for i, r in self.nodes.items() if r.state is NodeState.FAILED)
            if failed:
                self.status = RunStatus.FAILED
                self.error = "failed nodes: " + ", ".join(failed)
            else:
                self.status = RunStatus.SUCCEEDED

"""The scheduler's loop: wake on a run's news, advance it, store it, send its calls.

News comes on one Redis list (`keys.SCHEDULER_WAKE`): the API pushes a run's id when it
creates or cancels the run, and every end of a node call pushes the call's id (see
`calls.store`). Every RECONCILE_S the scheduler also looks at all running runs, so news
lost in a crash, a denied approval or a timed-out node is noticed anyway.

Crash safety: a node is stored as running with its call id *before* the call is created
and sent, and call ids are deterministic per attempt (`keys.dag_call`). A restarted
scheduler finds each running node's call: ended (the result is taken), present (waited
for), or absent (it was never sent: it is sent now, under the same id); a record that
says queued while the broker holds no message for it and it does not wait its turn is
treated as absent (`drop_unsent_calls`). A node that has ended is never run again.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from kombu.exceptions import OperationalError as BrokerError
from sqlalchemy.exc import DBAPIError

from toolrun.calls import keys
from toolrun.dag.run import NodeRun, NodeState, RunProgress, RunStatus
from toolrun.monitoring import tracing
from toolrun.permissions.levels import QUEUES
from toolrun.scheduler.dispatch import Admitted, NodeDispatcher, Refused
from toolrun.scheduler.store import RunStore
from toolrun.tools.model import ToolResult, ToolStatus
from toolrun.workers.broker import held_task_ids

RECONCILE_S = 2.0
UNSENT_RECHECK_S = 0.5
MAX_NEWS = 1000  # run ids taken off the wake list at once
_RETRYABLE = {ToolStatus.ERROR, ToolStatus.TIMEOUT}
# Outages of the broker or database: the service loop backs off and resumes. Any other
# error while advancing a run is that run's own and fails it alone.
_OUTAGES = (redis.RedisError, DBAPIError, BrokerError, OSError)
log = logging.getLogger(__name__)


@dataclass
class ActiveRun:
    agent_id: str | None
    progress: RunProgress
    cancel_requested: bool = False
    trace: dict[str, str] | None = None  # the run's trace: its node spans are children


class Scheduler:
    """Advances every running run; one leads at a time (it is the only writer of run
    state), others stand by (`scheduler.service`)."""

    def __init__(self, store: RunStore, dispatcher: NodeDispatcher, client: redis.Redis) -> None:
        self.store = store
        self.dispatcher = dispatcher
        self.client = client
        self.runs: dict[str, ActiveRun] = {}

    def serve(self, stop: threading.Event, leading: Callable[[], bool] = lambda: True) -> None:
        """Resume the running runs, then advance runs as news arrives, until `stop` or
        until it no longer leads (`leading`: see `scheduler.lease`)."""
        self.drop_unsent_calls()
        self.reconcile()
        reconciled = time.monotonic()
        while not stop.is_set() and leading():
            for run_id, calls in self.news(self.wait_s()).items():
                if not leading():  # checked before each run it advances, not only per round
                    return
                self.advance(run_id, calls)
            for run_id in self.due():
                if not leading():
                    return
                self.advance(run_id)
            if time.monotonic() - reconciled >= RECONCILE_S:
                self.reconcile()
                reconciled = time.monotonic()

    def reconcile(self) -> None:
        """Advance every running run as stored, with its cancel request and every call."""
        for run_id in self.store.running_ids():
            self.runs.pop(run_id, None)
            self.advance(run_id)

    def drop_unsent_calls(self) -> None:
        """At start: a call recorded as queued whose message the broker does not hold, and
        which does not wait its turn (`calls.fairness`), was never sent (recorded by an
        older toolrun, whose scheduler died between the two: now the record, the place in
        line and the message are one script), and a call recorded as awaiting approval
        with no inbox entry was never parked; their records are dropped, so the reconcile
        that follows sends them. A queued call is checked twice, half a second apart, so
        that a message a worker is just taking is not mistaken for one never sent."""
        queued, parked = self._waiting_calls()
        for call_id in parked:
            if self.dispatcher.lifecycle.inbox.get(call_id) is None:
                log.warning("call %s was recorded but never parked; parking it now", call_id)
                self.dispatcher.calls.forget(call_id)
        for attempt in range(2):
            if not queued:
                return
            if attempt:
                time.sleep(UNSENT_RECHECK_S)
                queued &= self._waiting_calls()[0]
            # Waiting first: a pump may hand a call out (its message then on the broker)
            # between the two looks, never the other way round.
            queued -= self.dispatcher.calls.waiting_their_turn(queued)
            queued -= held_task_ids(self.client, QUEUES)
        for call_id in queued:
            log.warning("call %s was recorded but never sent; sending it now", call_id)
            self.dispatcher.calls.forget(call_id)

    def _waiting_calls(self) -> tuple[set[str], set[str]]:
        """The calls of running nodes whose record says queued, and awaiting approval."""
        call_ids = []
        for run_id in self.store.running_ids():
            loaded = self.store.load(run_id)
            if loaded is not None:
                call_ids += [run.call_id for run in loaded[1].running if run.call_id]
        results = [r for r in self.dispatcher.calls.get_many(call_ids) if r is not None]
        return (
            {r.call_id for r in results if r.status is ToolStatus.QUEUED},
            {r.call_id for r in results if r.status is ToolStatus.AWAITING_APPROVAL},
        )

    def news(self, timeout_s: float) -> dict[str, set[str] | None]:
        """What the wake list says, waiting up to `timeout_s` for its first item: per run,
        the calls that ended, or None to look at the whole run (new, or cancelled: it is
        loaded again from the database)."""
        first = self.client.blpop([keys.SCHEDULER_WAKE], timeout=max(timeout_s, 0.01))
        if first is None:
            return {}
        more = self.client.lpop(keys.SCHEDULER_WAKE, MAX_NEWS) or []
        found: dict[str, set[str] | None] = {}
        for item in (_text(raw) for raw in [first[1], *more]):
            run_id = keys.run_of(item)
            if run_id is None:  # a run id: new, or "cancel:<id>"
                run_id = item.removeprefix(keys.CANCEL_PREFIX)
                self.runs.pop(run_id, None)
                found[run_id] = None
            elif run_id not in found:
                found[run_id] = {item}
            elif (calls := found[run_id]) is not None:
                calls.add(item)
        return found

    def wait_s(self) -> float:
        """Until the next retry or node deadline, at most RECONCILE_S."""
        now = time.time()
        soonest = min((self._next_event(active) for active in self.runs.values()), default=None)
        return RECONCILE_S if soonest is None else min(RECONCILE_S, max(0.0, soonest - now))

    def due(self) -> list[str]:
        now = time.time()
        return [run_id for run_id, active in self.runs.items() if self._next_event(active) <= now]

    def advance(self, run_id: str, calls: set[str] | None = None) -> None:
        """Take the results of the run's calls (only those in `calls`, if given), apply
        its policies, dispatch what is ready. A fault of this run's own (not an outage)
        fails the run, so that it cannot stop the others."""
        try:
            self._advance(run_id, calls)
        except _OUTAGES:
            raise
        except Exception as exc:
            log.exception("advancing run %s failed; the run is failed", run_id)
            self.runs.pop(run_id, None)
            self.store.abort(run_id, f"the scheduler could not advance this run: {exc!r}")

    def _advance(self, run_id: str, calls: set[str] | None) -> None:
        loaded = run_id not in self.runs
        active = self._active(run_id)
        if active is None:
            return
        progress = active.progress
        now = time.time()
        running = {run.node_id: run.call_id for run in progress.running}
        # Nodes become ready as their dependencies succeed; a run just loaded is looked
        # at whole (a new run's roots, or a scheduler that restarted).
        changed: set[str] = progress.promote() if loaded else set()
        if active.cancel_requested:
            changed |= progress.cancel(now)
        ended_calls: set[str] = set()
        changed |= self._collect(active, now, calls, ended_calls)
        sends = self._dispatch(run_id, active, progress, changed)
        self.store.save(run_id, progress, changed)
        for admitted in sends:
            self.dispatcher.send(admitted)
        for node_id, call_id in running.items():  # cancelled, or timed out
            run = progress.nodes[node_id]
            moved_on = run.call_id != call_id or run.state is not NodeState.RUNNING
            if call_id is not None and call_id not in ended_calls and moved_on:
                self.dispatcher.cancel_unneeded(call_id, run.arguments or {})
        if progress.status is not RunStatus.RUNNING:
            self.runs.pop(run_id, None)
            log.info("run %s %s", run_id, progress.status)

    def _active(self, run_id: str) -> ActiveRun | None:
        """The run from memory, else from the database (None: not running)."""
        active = self.runs.get(run_id)
        if active is None:
            loaded = self.store.load(run_id)
            if loaded is None or loaded[1].status is not RunStatus.RUNNING:
                return None
            record, progress = loaded
            active = ActiveRun(
                record.agent_id, progress, record.cancel_requested, trace=record.trace
            )
            self.runs[run_id] = active
        return active

    def _collect(
        self, active: ActiveRun, now: float, calls: set[str] | None, ended_calls: set[str]
    ) -> set[str]:
        """Apply the results of the run's running calls (those in `calls`, else all, and
        any past its deadline), adding the ids of those that ended to `ended_calls`;
        calls never sent are made ready to send again."""
        progress = active.progress
        changed: set[str] = set()
        running = [
            run
            for run in progress.running
            if run.call_id is not None
            and (calls is None or run.call_id in calls or self._deadline(progress, run) <= now)
        ]
        results = self.dispatcher.calls.get_many([run.call_id or "" for run in running])
        for run, result in zip(running, results, strict=True):
            if progress.nodes[run.node_id].state is not NodeState.RUNNING:
                continue  # ended meanwhile by another node's stop policy
            if result is None:
                progress.nodes[run.node_id].state = NodeState.READY  # never sent: again
                progress.nodes[run.node_id].attempts -= 1
                changed.add(run.node_id)
            elif (stranger := _stranger(progress, run, active.agent_id, result)) is not None:
                changed |= progress.failed(run.node_id, stranger, now, retryable=False)
            elif result.final:
                ended_calls.add(result.call_id)
                changed |= self._ended(progress, run.node_id, result, now)
            elif self._overdue(progress, run, result, now):
                timeout = progress.plan.timeout_s(progress.plan.node(run.node_id))
                changed |= progress.failed(run.node_id, f"timed out after {timeout:g} s", now)
        return changed

    def _ended(
        self, progress: RunProgress, node_id: str, result: ToolResult, now: float
    ) -> set[str]:
        run = progress.nodes[node_id]
        run.tool_version = result.tool_version
        if result.status is ToolStatus.SUCCESS:
            return progress.succeeded(node_id, result.output, now)
        error = f"{result.status}: {result.error or 'no message'}"
        return progress.failed(node_id, error, now, retryable=result.status in _RETRYABLE)

    def _overdue(self, progress: RunProgress, run: NodeRun, result: ToolResult, now: float) -> bool:
        """A queued or running call past its node's timeout. Time awaiting approval is not
        counted: the deadline moves while it waits, and starts again at the approval
        (when the approved call was queued), which survives a reload of the run."""
        if result.status is ToolStatus.AWAITING_APPROVAL:
            run.dispatched_at = now
            return False
        approved_at = result.metadata.get("queued_at")
        if (
            result.metadata.get("approved_by") is not None
            and isinstance(approved_at, int | float)
            and approved_at > (run.dispatched_at or 0)
        ):
            run.dispatched_at = approved_at
        return now >= self._deadline(progress, run)

    def _dispatch(
        self, run_id: str, active: ActiveRun, progress: RunProgress, changed: set[str]
    ) -> list[Admitted]:
        """Decide on every node that may start now; returns the calls to send once stored."""
        now = time.time()
        sends: list[tuple[str, Admitted]] = []
        outputs = {
            node_id: run.output
            for node_id, run in progress.nodes.items()
            if run.state is NodeState.SUCCEEDED
        }
        ready = progress.dispatchable(now)
        caller = self.dispatcher.caller(active.agent_id) if ready else None
        for node_id in ready:
            if progress.nodes[node_id].state is not NodeState.READY:
                continue  # a stop policy ended it while this loop ran
            node = progress.plan.node(node_id)
            run = progress.nodes[node_id]
            call_id = keys.dag_call(run_id, node_id, run.attempts + 1)
            timeout = progress.plan.timeout_s(node)
            with tracing.span(
                f"dag node {node_id}",
                attributes={
                    "toolrun.dag.run_id": run_id,
                    "toolrun.dag.node_id": node_id,
                    "toolrun.dag.attempt": run.attempts + 1,
                    "gen_ai.tool.name": node.tool,
                    "gen_ai.tool.call.id": call_id,
                },
                parent=active.trace,  # the run's: its calls are sent in this span's trace
            ) as span:
                decided = (
                    caller
                    if isinstance(caller, Refused)
                    else self.dispatcher.prepare(node, call_id, caller, outputs, timeout)
                )
                if isinstance(decided, Refused):
                    tracing.annotate(span, {}, error="refused")
            progress.dispatched(node_id, call_id, now)
            changed.add(node_id)
            if isinstance(decided, Refused):
                changed |= progress.failed(node_id, decided.reason, now, retryable=False)
            else:
                run.arguments = decided.call.arguments
                run.tool_version = decided.call.version
                sends.append((node_id, decided))
        return [p for node_id, p in sends if progress.nodes[node_id].state is NodeState.RUNNING]

    def _next_event(self, active: ActiveRun) -> float:
        """When this run next needs a look without news: a retry or a node deadline."""
        progress = active.progress
        deadlines = (self._deadline(progress, run) for run in progress.running)
        return min([progress.next_retry_at() or math.inf, *deadlines])

    @staticmethod
    def _deadline(progress: RunProgress, run: NodeRun) -> float:
        timeout = progress.plan.timeout_s(progress.plan.node(run.node_id))
        if timeout is None or run.dispatched_at is None:
            return math.inf
        return run.dispatched_at + timeout


def _stranger(
    progress: RunProgress, run: NodeRun, agent_id: str | None, result: ToolResult
) -> str | None:
    """Why the call found under a node's call id is not the one the scheduler made (only
    the scheduler may create `dag:` ids; this guards against one that got in anyway)."""
    tool = progress.plan.node(run.node_id).tool
    if result.tool_name != tool or result.metadata.get("agent_id") != agent_id:
        return (
            f"call id {run.call_id} is taken by another call ({result.tool_name} for agent "
            f"{result.metadata.get('agent_id')}); refusing its result"
        )
    return None


def _text(item: bytes | str) -> str:
    return item.decode() if isinstance(item, bytes) else item

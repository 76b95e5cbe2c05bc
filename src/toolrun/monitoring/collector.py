"""Prometheus metric families built from a Snapshot (a collector for a per-request registry)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from toolrun.calls.fairness import DEAD_WORKER_S
from toolrun.monitoring.snapshot import Snapshot


class PlatformCollector(Collector):
    """The platform's metrics as of `snapshot`, plus the approval inbox's backlog and, under
    `toolrun up`, its processes' restarts."""

    def __init__(
        self,
        snapshot: Snapshot,
        *,
        approvals_pending: int,
        oldest_pending_s: float = 0.0,
        agent_names: dict[str, str] | None = None,
        queue_bound: int = 0,
        process_restarts: dict[str, int] | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.approvals_pending = approvals_pending
        self.oldest_pending_s = oldest_pending_s  # 0 when nothing is pending
        self.agent_names = agent_names or {}  # agent id → name, for the agent label
        self.queue_bound = queue_bound
        self.process_restarts = process_restarts or {}  # process → restarts; {}: no `up`

    def collect(self) -> Iterator[Metric]:
        calls = CounterMetricFamily(
            "toolrun_calls",
            "Calls that ended, by tool and final status (success, error, timeout, blocked, "
            "denied, cancelled), counted by the worker or API process that ended them.",
            labels=["tool", "status"],
        )
        for (tool, status), count in sorted(self.snapshot.calls.items()):
            calls.add_metric([tool, status], count)
        yield calls

        duration = HistogramMetricFamily(
            "toolrun_call_duration_seconds",
            "Execution time of calls that ran on a worker, by tool.",
            labels=["tool"],
        )
        for tool, histogram in sorted(self.snapshot.durations.items()):
            duration.add_metric([tool], histogram.cumulative(), sum_value=histogram.sum)
        yield duration

        depth = GaugeMetricFamily(
            "toolrun_queue_depth",
            "Calls waiting in each permission level's queue, and in the task tool's "
            "(delegation), not yet taken by a worker: in their agents' turns and in the broker.",
            labels=["level"],
        )
        for label, waiting in self.snapshot.queue_depths.items():
            depth.add_metric([label], waiting)
        yield depth

        wait = HistogramMetricFamily(
            "toolrun_queue_wait_seconds",
            "Time calls waited between being queued (or approved) and a worker starting them, "
            "by the worker's level (delegation: the task tool's).",
            labels=["level"],
        )
        for label, histogram in sorted(self.snapshot.queue_waits.items()):
            wait.add_metric([label], histogram.cumulative(), sum_value=histogram.sum)
        yield wait
        yield from self._workers()

        yield GaugeMetricFamily(
            "toolrun_queue_bound",
            "Calls that may wait on one queue before new ones are refused with 503 (0: none).",
            value=self.queue_bound,
        )
        yield from self._agents()

        yield GaugeMetricFamily(
            "toolrun_approvals_pending",
            "Calls waiting in the approval inbox for an operator's decision.",
            value=self.approvals_pending,
        )
        yield GaugeMetricFamily(
            "toolrun_approvals_oldest_pending_seconds",
            "How long the oldest call still waiting in the approval inbox has waited (0: none).",
            value=self.oldest_pending_s,
        )
        restarts = GaugeMetricFamily(
            "toolrun_process_restarts",
            "Times `toolrun up`'s supervisor restarted each process since it started (no "
            "series elsewhere).",
            labels=["process"],
        )
        for process, count in sorted(self.process_restarts.items()):
            restarts.add_metric([process], count)
        yield restarts

    def _workers(self) -> Iterator[Metric]:
        """Each queue's worker processes alive, their pool processes, those lost lately."""
        alive = GaugeMetricFamily(
            "toolrun_workers",
            "Worker processes serving each level's queue (and delegation's), alive now.",
            labels=["level"],
        )
        slots = GaugeMetricFamily(
            "toolrun_worker_slots",
            "Pool processes of those workers: how many calls each level runs at once.",
            labels=["level"],
        )
        lost = GaugeMetricFamily(
            "toolrun_workers_lost",
            "Worker processes of each level gone without signing off (killed, crashed, "
            f"their machine away) in the last {DEAD_WORKER_S:g} s; a clean stop is not one.",
            labels=["level"],
        )
        for label, workers in self.snapshot.workers.items():
            alive.add_metric([label], workers.alive)
            slots.add_metric([label], workers.slots)
            lost.add_metric([label], workers.lost)
        yield from (alive, slots, lost)

    def _agents(self) -> Iterator[Metric]:
        """Each agent's calls waiting and open, and the calls its quotas refused."""
        name = self._agent_label
        queued = GaugeMetricFamily(
            "toolrun_agent_calls_queued",
            "An agent's calls waiting for a worker (in its turn on a shared queue).",
            labels=["agent"],
        )
        for agent, count in sorted(self.snapshot.agents_queued.items()):
            queued.add_metric([name(agent)], count)
        yield queued
        in_flight = GaugeMetricFamily(
            "toolrun_agent_calls_in_flight",
            "An agent's calls queued or running.",
            labels=["agent"],
        )
        for agent, count in sorted(self.snapshot.agents_in_flight.items()):
            in_flight.add_metric([name(agent)], count)
        yield in_flight
        throttled = CounterMetricFamily(
            "toolrun_calls_throttled",
            "Calls refused before they were queued, by agent and quota (rate_per_s, "
            "max_in_flight, max_queued; queue_bound: the queue was full, a 503).",
            labels=["agent", "quota"],
        )
        for (agent, quota), count in sorted(self.snapshot.throttled.items()):
            throttled.add_metric([name(agent), quota], count)
        yield throttled

    def _agent_label(self, agent: str) -> str:
        return self.agent_names.get(agent, agent)

"""The run state machine: readiness, concurrency, stop / skip / retry, cancel."""

from __future__ import annotations

from typing import Any

from toolrun.dag.plan import parse_plan
from toolrun.dag.run import NodeRun, NodeState, RunProgress, RunStatus


def progress(nodes: list[dict[str, Any]], **plan: Any) -> RunProgress:
    return RunProgress.start(parse_plan({"nodes": nodes, **plan}))


def node(node_id: str, *after: str, **options: Any) -> dict[str, Any]:
    return {"id": node_id, "tool": "t", "depends_on": list(after), **options}


def states(run: RunProgress) -> dict[str, str]:
    return {node_id: str(r.state) for node_id, r in run.nodes.items()}


def dispatch_all(run: RunProgress, now: float = 0.0) -> list[str]:
    ready = run.dispatchable(now)
    for node_id in ready:
        run.dispatched(node_id, f"call-{node_id}", now)
    return ready


def test_nodes_become_ready_when_every_dependency_succeeded() -> None:
    run = progress([node("a"), node("b"), node("c", "a", "b")])
    run.promote()

    assert dispatch_all(run) == ["a", "b"]
    run.succeeded("a", 1, 1.0)
    assert run.dispatchable(1.0) == []
    run.succeeded("b", 2, 2.0)
    assert dispatch_all(run) == ["c"]
    run.succeeded("c", 3, 3.0)
    assert run.status is RunStatus.SUCCEEDED


def test_max_concurrency_caps_running_nodes() -> None:
    run = progress([node(f"n{i}") for i in range(5)], max_concurrency=2)
    run.promote()

    assert dispatch_all(run) == ["n0", "n1"]
    assert run.dispatchable(0) == []
    run.succeeded("n0", None, 1)
    assert dispatch_all(run) == ["n2"]


def test_stop_cancels_the_rest_and_marks_downstream_upstream_failed() -> None:
    run = progress([node("a"), node("b", "a"), node("c"), node("d")])
    run.promote()
    dispatch_all(run)

    changed = run.failed("a", "boom", 1.0)

    assert states(run) == {
        "a": "failed",
        "b": "upstream_failed",
        "c": "cancelled",
        "d": "cancelled",
    }
    assert changed == {"a", "b", "c", "d"}
    assert run.status is RunStatus.FAILED
    assert run.error == "node a failed: boom"
    assert run.dispatchable(2.0) == []


def test_skip_skips_descendants_only() -> None:
    run = progress([node("a", on_failure="skip"), node("b", "a"), node("c", "b"), node("x")])
    run.promote()
    dispatch_all(run)

    run.failed("a", "boom", 1.0)

    assert states(run) == {"a": "failed", "b": "skipped", "c": "skipped", "x": "running"}
    assert run.status is RunStatus.RUNNING
    run.succeeded("x", None, 2.0)
    assert run.status is RunStatus.FAILED
    assert run.error == "failed nodes: a"


def test_retry_waits_its_delay_then_applies_on_exhausted() -> None:
    retry = {"max_attempts": 2, "initial_delay": 10, "jitter": 0, "on_exhausted": "skip"}
    run = progress([node("a", on_failure="retry", retry=retry), node("b", "a")])
    run.promote()
    dispatch_all(run, 0.0)

    run.failed("a", "first", 1.0)
    assert run.nodes["a"].state is NodeState.READY
    assert run.next_retry_at() == 11.0
    assert run.dispatchable(10.9) == []
    assert dispatch_all(run, 11.0) == ["a"]
    assert run.nodes["a"].attempts == 2

    run.failed("a", "second", 12.0)
    assert states(run) == {"a": "failed", "b": "skipped"}
    assert run.nodes["a"].error == "second"


def test_a_failure_retrying_cannot_fix_is_not_retried() -> None:
    run = progress([node("a", on_failure="retry")])
    run.promote()
    dispatch_all(run)

    run.failed("a", "blocked: no", 1.0, retryable=False)

    assert run.nodes["a"].state is NodeState.FAILED
    assert run.status is RunStatus.FAILED


def test_cancel_ends_every_node_not_yet_ended() -> None:
    run = progress([node("a"), node("b", "a"), node("c")])
    run.promote()
    dispatch_all(run)
    run.succeeded("c", None, 1.0)

    run.cancel(2.0)

    assert states(run) == {"a": "cancelled", "b": "cancelled", "c": "succeeded"}
    assert run.status is RunStatus.CANCELLED
    assert run.cancel(3.0) == set()


def test_a_run_resumed_part_way_ends_when_its_last_nodes_end() -> None:
    plan = parse_plan({"nodes": [node("a"), node("b", "a"), node("c", "a"), node("d", "b", "c")]})
    stored = {
        "a": NodeRun("a", NodeState.SUCCEEDED),
        "b": NodeRun("b", NodeState.RUNNING, attempts=1),
        "c": NodeRun("c", NodeState.SUCCEEDED),
        "d": NodeRun("d"),
    }
    run = RunProgress(plan, stored)

    assert run.unfinished == 2
    assert run.succeeded("b", "out", 1.0) == {"b", "d"}  # only b's dependents are looked at
    assert states(run)["d"] == "ready"
    dispatch_all(run, 1.0)
    run.succeeded("d", "out", 2.0)
    assert run.status is RunStatus.SUCCEEDED
    assert run.unfinished == 0


def test_a_failure_skips_every_descendant_of_a_wide_plan() -> None:
    nodes = [node("root", on_failure="skip")]
    nodes += [node(f"n{i}", "root") for i in range(200)]
    nodes += [node("free")]
    run = progress(nodes)
    run.promote()
    dispatch_all(run)

    run.failed("root", "boom", 1.0)

    assert sum(state == "skipped" for state in states(run).values()) == 200
    assert run.status is RunStatus.RUNNING  # "free" has not ended
    run.succeeded("free", None, 2.0)
    assert run.status is RunStatus.FAILED

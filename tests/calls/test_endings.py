"""A call ends once (real Redis): the first ending is stored, counted and told; a later
one — a worker back after its call was settled as lost, a cancel racing a finish — is
dropped whole."""

from __future__ import annotations

import redis

from toolrun.calls import keys
from toolrun.calls.endings import CallEnded, Endings
from toolrun.calls.store import CallStore
from toolrun.monitoring.metrics import CALLS, call_increments
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus


def ended(call: ToolCall, status: ToolStatus) -> ToolResult:
    result = ToolResult.accepted(call, status)
    result.metadata["execution_time_ms"] = 12.5
    return result


def test_the_first_ending_wins_and_a_later_one_leaves_no_trace(
    redis_client: redis.Redis,
) -> None:
    store = CallStore(redis_client, ttl_s=600)
    told: list[CallEnded] = []

    def counters(event: CallEnded) -> list[tuple[str, str, int | float]]:
        return call_increments(event.result.tool_name, event.result.status, 0.0125)

    endings = Endings(store, [told.append], counters=[counters])
    call = ToolCall(tool_name="bash", arguments={"command": "true"})
    assert store.create(ToolResult.accepted(call, ToolStatus.RUNNING), request=call.digest())

    first = endings.finish(ended(call, ToolStatus.ERROR), call.arguments, None)
    later = endings.finish(ended(call, ToolStatus.SUCCESS), call.arguments, None)

    assert (first.stored, later.stored) == (True, False)
    stored = store.get(call.id)
    assert stored is not None
    assert stored.status is ToolStatus.ERROR
    assert [event.result.status for event in told] == [ToolStatus.ERROR]
    assert redis_client.hget(CALLS, "error:bash") == b"1"
    assert redis_client.hget(CALLS, "success:bash") is None
    assert redis_client.llen(keys.done(call.id)) == 1  # waiters were handed one result


def test_a_node_call_ending_wakes_the_scheduler_with_its_final_state(
    redis_client: redis.Redis,
) -> None:
    store = CallStore(redis_client, ttl_s=600)
    call = ToolCall(id=keys.dag_call("run1", "n1", 1), tool_name="read")
    redis_client.delete(keys.SCHEDULER_WAKE)

    assert store.finish(ended(call, ToolStatus.SUCCESS)).stored

    assert redis_client.lrange(keys.SCHEDULER_WAKE, 0, -1) == [call.id.encode()]
    assert store.finish(ended(call, ToolStatus.ERROR)).stored is False
    assert redis_client.llen(keys.SCHEDULER_WAKE) == 1

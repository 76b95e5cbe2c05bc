"""The scheduler loop over a real SQLite run store, with a stand-in dispatcher."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy.engine import Engine

from toolrun.calls import keys
from toolrun.dag import parse_plan
from toolrun.database import open_database
from toolrun.scheduler.dispatch import Refused
from toolrun.scheduler.loop import Scheduler
from toolrun.scheduler.store import RunStore
from toolrun.tools.model import ToolCall, ToolResult


@dataclass
class NoCalls:
    def get_many(self, call_ids: list[str]) -> list[ToolResult | None]:
        return [None for _ in call_ids]


@dataclass
class FaultyDispatcher:
    """Refuses every node call, but raises `fault` for the nodes of run `bad`."""

    fault: Exception
    calls: NoCalls = field(default_factory=NoCalls)
    prepared: list[str] = field(default_factory=list)

    def caller(self, agent_id: str | None) -> None:
        return None

    def prepare(self, node: Any, call_id: str, *_: Any) -> Refused:
        if keys.run_of(call_id) == "bad":
            raise self.fault
        self.prepared.append(call_id)
        return Refused("refused by the test")

    def cancel(self, call_id: str, arguments: dict[str, Any]) -> None:
        raise AssertionError("nothing runs, so nothing is cancelled")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = open_database(f"sqlite:///{tmp_path / 'runs.db'}")
    yield engine
    engine.dispose()


def scheduler_with(engine: Engine, fault: Exception) -> tuple[Scheduler, RunStore]:
    store = RunStore(engine)
    plan = parse_plan({"nodes": [{"id": "only", "tool": "read"}]})
    for run_id in ("bad", "good"):
        store.create(run_id, None, plan)
    dispatcher: Any = FaultyDispatcher(fault)
    return Scheduler(store, dispatcher, client=None), store  # type: ignore[arg-type]


def test_a_fault_in_one_run_fails_that_run_and_the_others_go_on(engine: Engine) -> None:
    scheduler, store = scheduler_with(engine, ValueError("call id too long"))

    scheduler.reconcile()

    bad = store.get("bad")
    good = store.get("good")
    assert bad is not None
    assert good is not None
    assert bad[0].status == "failed"
    assert bad[0].error == (
        "the scheduler could not advance this run: ValueError('call id too long')"
    )
    assert [node.state for node in bad[1]] == ["cancelled"]
    assert good[0].status == "failed"  # advanced: its only node was refused
    assert good[1][0].error == "refused by the test"
    assert scheduler.runs == {}


def test_an_outage_is_not_blamed_on_the_run(engine: Engine) -> None:
    scheduler, store = scheduler_with(engine, redis.ConnectionError("Redis went away"))

    with pytest.raises(redis.ConnectionError):
        scheduler.reconcile()

    bad = store.get("bad")
    assert bad is not None
    assert bad[0].status == "running"


def test_the_longest_ids_make_a_valid_call_id() -> None:
    run_id = "r" * keys.MAX_RUN_ID_CHARS
    node_id = "n" * 64
    call_id = keys.dag_call(run_id, node_id, 100)  # max_attempts is at most 100

    assert ToolCall(id=call_id, tool_name="read").id == call_id
    assert keys.run_of(call_id) == run_id

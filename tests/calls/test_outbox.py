"""The history outbox (real Redis, a real database): rows stored with the final state are
written once each, whichever drainer writes them and whatever dies in between."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import redis
import sqlalchemy
from sqlalchemy.exc import IntegrityError, OperationalError

from toolrun.calls import keys
from toolrun.calls.endings import Endings
from toolrun.calls.outbox import HistoryOutbox
from toolrun.calls.store import CallStore
from toolrun.history import HistoryStore
from toolrun.history.records import CallRecord
from toolrun.history.store import HistoryFilter
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus

SECRET_VALUE = "s3cret"  # noqa: S105 - a stand-in secret
CLAIM_IDLE_S = 1.0
SECRET = {"type": "object", "properties": {"token": {"type": "string", "writeOnly": True}}}


def end_calls(client: redis.Redis, count: int) -> list[str]:
    """End `count` calls as a worker does: each row's makings go with its final state."""
    endings = Endings(CallStore(client, ttl_s=600), [], outbox=True)
    ids = []
    for index in range(count):
        call = ToolCall(tool_name="fetch", arguments={"token": SECRET_VALUE, "n": index})
        result = ToolResult.accepted(call, ToolStatus.SUCCESS)
        assert endings.finish(result, call.arguments, SECRET).stored
        ids.append(call.id)
    return ids


def drainer(client: redis.Redis, engine: sqlalchemy.engine.Engine, name: str) -> HistoryOutbox:
    return HistoryOutbox(
        client, lambda: HistoryStore(engine), name, block_s=0.1, claim_idle_s=CLAIM_IDLE_S
    )


def rows(engine: sqlalchemy.engine.Engine) -> dict[str, CallRecord]:
    page = HistoryStore(engine).query(HistoryFilter(), limit=1000)
    return {row.call_id: row for row in page.rows}


def test_rows_go_with_the_final_state_and_are_written_once_redacted(
    redis_client: redis.Redis, engine: sqlalchemy.engine.Engine
) -> None:
    ids = end_calls(redis_client, 3)

    assert drainer(redis_client, engine, "a").drain() == 3
    assert drainer(redis_client, engine, "a").drain() == 0

    written = rows(engine)
    assert set(written) == set(ids)
    assert all(row.arguments["token"] != SECRET_VALUE for row in written.values())
    assert redis_client.xlen(keys.HISTORY_OUTBOX) == 0  # written rows leave the stream


def test_rows_a_dead_drainer_read_are_written_by_another(
    redis_client: redis.Redis, engine: sqlalchemy.engine.Engine
) -> None:
    ids = end_calls(redis_client, 2)
    dead = drainer(redis_client, engine, "dead")
    dead._ensure_group()
    assert len(dead._read(">")) == 2  # read, then its process died before writing them

    survivor = drainer(redis_client, engine, "survivor")
    assert survivor.drain() == 0  # not idle long enough yet: nothing new either
    time.sleep(CLAIM_IDLE_S + 0.1)  # idle past claim_idle_s

    assert survivor.drain() == 2
    assert set(rows(engine)) == set(ids)


def test_a_batch_the_database_refuses_stays_and_is_written_later(
    redis_client: redis.Redis, engine: sqlalchemy.engine.Engine
) -> None:
    ids = end_calls(redis_client, 2)

    class Down(HistoryStore):
        def write_rows(self, rows: object) -> None:
            raise OperationalError("INSERT", {}, Exception("database is locked"))

    down = HistoryOutbox(redis_client, lambda: Down(engine), "a", block_s=0.1)
    with pytest.raises(OperationalError):
        down.drain()

    assert drainer(redis_client, engine, "a").drain() == 2  # its own pending, once back
    assert set(rows(engine)) == set(ids)


def test_a_call_ended_as_it_is_created_has_its_row_in_the_outbox_too(
    redis_client: redis.Redis, engine: sqlalchemy.engine.Engine
) -> None:
    """A call refused at admission on a worker (a sub-agent's, blocked): its record is
    created final, with its row."""
    endings = Endings(CallStore(redis_client, ttl_s=600), [], outbox=True)
    call = ToolCall(tool_name="fetch", arguments={"token": SECRET_VALUE})
    blocked = ToolResult.accepted(call, ToolStatus.BLOCKED)

    assert endings.at_once(blocked, call.arguments, SECRET, request=call.digest())
    assert not endings.at_once(blocked, call.arguments, SECRET, request=call.digest())

    assert drainer(redis_client, engine, "a").drain() == 1
    [row] = rows(engine).values()
    assert (row.call_id, row.status) == (call.id, "blocked")
    assert row.arguments["token"] != SECRET_VALUE


def test_a_row_the_database_refuses_holds_up_no_other(
    redis_client: redis.Redis, engine: sqlalchemy.engine.Engine
) -> None:
    ids = end_calls(redis_client, 3)
    bad = ids[1]

    class Picky(HistoryStore):
        def write_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
            if any(row["call_id"] == bad for row in rows):
                raise IntegrityError("INSERT", {}, Exception("refused"))
            super().write_rows(rows)

    HistoryOutbox(redis_client, lambda: Picky(engine), "a", block_s=0.1).drain()

    assert set(rows(engine)) == {ids[0], ids[2]}
    assert redis_client.xlen(keys.HISTORY_OUTBOX) == 0  # the refused one is not retried forever

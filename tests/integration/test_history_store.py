"""The history store on real SQLite and real PostgreSQL: filters, cursor pages, no lost rows
when several processes write at once."""

from __future__ import annotations

import multiprocessing
import uuid
from collections.abc import Iterator

import pytest

from toolrun.database import open_database
from toolrun.history import CallRecord, HistoryFilter, HistoryStore, record_of
from toolrun.history.records import REDACTED
from toolrun.history.store import InvalidCursor
from toolrun.tools.model import ToolResult, ToolStatus


@pytest.fixture
def url(database_url: str) -> str:
    return database_url


@pytest.fixture
def store(url: str) -> Iterator[HistoryStore]:
    engine = open_database(url)
    yield HistoryStore(engine)
    engine.dispose()


def row(n: int, tool: str = "read", status: str = "success", agent: str = "a1") -> CallRecord:
    return CallRecord(
        call_id=f"call-{n:04d}",
        agent_id=agent,
        tool_name=tool,
        tool_version="1.0.0",
        arguments={"n": n},
        status=status,
        queued_at=1_700_000_000 + n,
        execution_time_ms=float(n),
    )


def test_the_last_ten_read_calls_newest_first(store: HistoryStore) -> None:
    for n in range(100):
        store.write(row(n, tool="read" if n % 3 == 0 else "grep"))

    page = store.query(HistoryFilter(tool="read"), limit=10)

    expected = [f"call-{n:04d}" for n in range(99, -1, -1) if n % 3 == 0][:10]
    assert [r.call_id for r in page.rows] == expected
    assert page.next_cursor is not None


def test_cursor_pages_cover_every_row_once(store: HistoryStore) -> None:
    for n in range(57):
        store.write(row(n))
    store.write(row(57).model_copy(update={"queued_at": row(56).queued_at}))  # a tie

    seen: list[str] = []
    cursor = None
    while True:
        page = store.query(HistoryFilter(), limit=10, cursor=cursor)
        seen += [r.call_id for r in page.rows]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor

    assert len(seen) == len(set(seen)) == 58
    assert seen[:2] == ["call-0057", "call-0056"]  # same time: by call id, descending


def test_filters(store: HistoryStore) -> None:
    for n in range(20):
        store.write(row(n, status="error" if n % 5 == 0 else "success", agent=f"a{n % 2}"))

    def ids(where: HistoryFilter) -> list[int]:
        return sorted(int(r.call_id[5:]) for r in store.query(where, limit=100).rows)

    assert ids(HistoryFilter(status="error")) == [0, 5, 10, 15]
    assert ids(HistoryFilter(agent_id="a1", status="error")) == [5, 15]
    assert ids(HistoryFilter(since=1_700_000_010, until=1_700_000_013)) == [10, 11, 12]
    assert ids(HistoryFilter(version="9.9.9")) == []


def test_a_second_write_replaces_the_row(store: HistoryStore) -> None:
    store.write(row(1, status="error"))
    store.write(row(1, status="success"))

    rows = store.query(HistoryFilter(), limit=10).rows
    assert [(r.call_id, r.status) for r in rows] == [("call-0001", "success")]


def test_secret_arguments_are_never_stored(store: HistoryStore) -> None:
    parameters = {"properties": {"token": {"type": "string", "writeOnly": True}}}
    result = ToolResult(
        call_id="secret-1",
        tool_name="deploy",
        status=ToolStatus.SUCCESS,
        metadata={"queued_at": 1.0},
    )

    store.write(record_of(result, {"token": "hunter2", "target": "prod"}, parameters))

    stored = store.get("secret-1")
    assert stored is not None
    assert stored.arguments == {"token": REDACTED, "target": "prod"}


def test_a_forged_cursor_is_refused(store: HistoryStore) -> None:
    for cursor in ["nonsense", "bm90IGpzb24", "e30", "WzFd"]:  # junk, "not json", {}, [1]
        with pytest.raises(InvalidCursor):
            store.query(HistoryFilter(), cursor=cursor)


def _write_many(url: str, prefix: str, count: int) -> None:
    engine = open_database(url)
    store = HistoryStore(engine)
    for n in range(count):
        store.write(row(n).model_copy(update={"call_id": f"{prefix}-{n}"}))
    engine.dispose()


def test_processes_writing_at_once_lose_no_row(url: str) -> None:
    open_database(url).dispose()  # tables first, so the writers do not race to create them
    prefixes = [uuid.uuid4().hex[:8] for _ in range(4)]
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(url, p, 150)) for p in prefixes]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)

    assert [w.exitcode for w in writers] == [0, 0, 0, 0]
    engine = open_database(url)
    rows = HistoryStore(engine).query(HistoryFilter(), limit=1000).rows
    engine.dispose()
    assert len({r.call_id for r in rows if r.call_id.split("-")[0] in prefixes}) == 600

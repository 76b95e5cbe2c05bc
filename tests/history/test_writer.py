"""The background history writer: rows arrive in batches, none lost, flush drains."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolrun.database import open_database
from toolrun.history import CallRecord, HistoryFilter, HistoryStore
from toolrun.history.writer import HistoryWriter


class CountingStore(HistoryStore):
    def __init__(self, path: Path) -> None:
        super().__init__(open_database(f"sqlite:///{path}"))
        self.batches: list[int] = []

    def write_many(self, records: Sequence[CallRecord]) -> None:
        self.batches.append(len(records))
        super().write_many(records)


def record(n: int) -> CallRecord:
    return CallRecord(call_id=f"c{n}", tool_name="read", status="success", queued_at=float(n))


def test_every_row_is_written_in_few_batches(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "h.db")
    writer = HistoryWriter(store, interval_s=0.5, max_batch=300)

    for n in range(1000):
        writer.put(record(n))
    writer.flush()

    assert len(store.query(HistoryFilter(), limit=1000).rows) == 1000
    assert sum(store.batches) == 1000
    assert max(store.batches) <= 300
    assert len(store.batches) < 20


def test_put_after_flush_starts_again(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "h.db")
    writer = HistoryWriter(store)

    writer.put(record(1))
    writer.flush()
    writer.put(record(2))
    writer.flush()

    assert {r.call_id for r in store.query(HistoryFilter()).rows} == {"c1", "c2"}


def test_a_failing_batch_does_not_stop_the_writer(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "h.db")
    writer = HistoryWriter(store)
    broken = record(1).model_copy(update={"status": None})  # NOT NULL: the batch fails

    writer.put(broken)
    writer.flush()
    writer.put(record(2))
    writer.flush()

    assert [r.call_id for r in store.query(HistoryFilter()).rows] == ["c2"]

"""The history outbox: the rows of calls that workers ended, drained into the database.

A worker stores a call's final state and its history row's makings (the result and the
redacted arguments) in one atomic round trip (`CallStore.finish`), before the call's
message is acknowledged: a pool process killed a moment later loses no row. The makings
wait in a Redis stream; each worker's main process runs a drainer (`HistoryOutbox`), one
consumer of the stream's group, that writes them in batches and acknowledges what it has
written. Entries read by a drainer that died are claimed by another once idle for
`claim_idle_s`; a batch that fails to write stays pending and is tried again. A row is
keyed by its call id, so writing one twice changes nothing. With traces on, each batch
is a `write history` span of the worker's (its rows, and the first call ids).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import redis
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from toolrun.calls import keys
from toolrun.history.records import row_of
from toolrun.history.store import HistoryStore
from toolrun.monitoring import tracing
from toolrun.tools.model import ToolResult

log = logging.getLogger(__name__)
BATCH = 500
TRACED_IDS = 50  # the call ids a batch's span names: enough to find one, not a whole batch
Entry = tuple[bytes, dict[bytes, bytes]]
Row = dict[str, Any]  # a history row, column by column (`records.row_of`)


@dataclass
class HistoryOutbox:
    """One drainer: `drain` once, or `start` a daemon thread that drains until `stop`."""

    client: redis.Redis
    open_store: Callable[[], HistoryStore]  # called on first use: a worker starts without it
    consumer: str  # its name in the group: the worker's
    block_s: float = 1.0  # how long one read waits for new rows
    claim_idle_s: float = 30.0  # when another drainer's unacknowledged rows are taken over
    linger_s: float = 0.2  # after a batch short of BATCH: rows gather, one commit for many
    _stop: threading.Event = field(default_factory=threading.Event)

    @cached_property
    def store(self) -> HistoryStore:
        return self.open_store()

    def start(self) -> None:
        threading.Thread(target=self._loop, name="history-outbox", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                written = self.drain()
            except Exception as exc:  # Redis or the database away: wait, then again
                log.warning("history outbox not drained (%r); trying again", exc)
                self._stop.wait(self.block_s)
            else:
                if written < BATCH:  # the rows are safe in Redis meanwhile
                    self._stop.wait(self.linger_s)

    def drain(self) -> int:
        """Write one batch: this drainer's own unacknowledged rows first, then rows a
        dead drainer left, then new ones (waiting up to `block_s`). Returns how many rows.

        Raises:
            redis.RedisError, sqlalchemy.exc.OperationalError: nothing was acknowledged.
        """
        self._ensure_group()
        entries = self._read("0") or self._claimed() or self._read(">", block=True)
        if not entries:
            return 0
        rows = [row for row in map(_row, entries) if row is not None]
        with tracing.span("write history") as span:
            tracing.annotate(
                span,
                {
                    "toolrun.history.rows": len(rows),
                    "toolrun.history.call_ids": [row["call_id"] for row in rows[:TRACED_IDS]],
                },
            )
            self._write(rows)
        ids = [entry_id for entry_id, _ in entries]
        pipe = self.client.pipeline(transaction=False)
        pipe.xack(keys.HISTORY_OUTBOX, keys.HISTORY_WRITERS, *ids)
        pipe.xdel(keys.HISTORY_OUTBOX, *ids)
        pipe.execute()
        return len(rows)

    def _write(self, rows: list[Row]) -> None:
        """Write `rows` in one transaction; if the database refuses the batch (not for
        being away: that is raised, and the rows stay pending), write them one by one,
        logging and dropping any it refuses: one bad row holds up no other."""
        try:
            self.store.write_rows(rows)
        except OperationalError:
            raise
        except SQLAlchemyError as exc:
            log.warning("history batch refused (%r); writing its rows one by one", exc)
            for row in rows:
                try:
                    self.store.write_rows([row])
                except OperationalError:
                    raise
                except SQLAlchemyError:
                    log.exception("history row of %s refused; dropped", row["call_id"])

    def _ensure_group(self) -> None:
        try:
            self.client.xgroup_create(keys.HISTORY_OUTBOX, keys.HISTORY_WRITERS, "0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def _read(self, start: str, *, block: bool = False) -> list[Entry]:
        answer: Any = self.client.xreadgroup(
            keys.HISTORY_WRITERS,
            self.consumer,
            {keys.HISTORY_OUTBOX: start},
            count=BATCH,
            block=int(self.block_s * 1000) if block else None,
        )
        return [
            (entry_id, fields) for _, found in answer or [] for entry_id, fields in found if fields
        ]

    def _claimed(self) -> list[Entry]:
        answer: Any = self.client.xautoclaim(
            keys.HISTORY_OUTBOX,
            keys.HISTORY_WRITERS,
            self.consumer,
            min_idle_time=int(self.claim_idle_s * 1000),
            count=BATCH,
        )
        return [(entry_id, fields) for entry_id, fields in answer[1] if fields]


def _row(entry: Entry) -> Row | None:
    """The history row of an outbox entry; None (logged) for one that cannot be read,
    which is then acknowledged with the rest: one bad entry holds up no other."""
    entry_id, fields = entry
    try:
        result = ToolResult.model_validate_json(fields[b"result"])
        arguments = json.loads(fields[b"arguments"])
        return row_of(result, arguments, None)  # redacted when it was put in
    except Exception:
        log.exception("history outbox entry %r cannot be read; dropped", entry_id)
        return None

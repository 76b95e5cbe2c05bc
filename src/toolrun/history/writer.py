"""Writes history rows in batches on a background thread, off the calls' path.

A worker process ends calls back to back; a database commit after each one would cost the
next call its time. Rows wait here at most `interval_s` (or until `max_batch` are queued)
and go to the store in one transaction. `flush` drains the queue (at process shutdown).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from toolrun.history.records import CallRecord
from toolrun.history.store import HistoryStore

log = logging.getLogger(__name__)


class HistoryWriter:
    """A queue of rows and the thread that writes them; the thread starts on first use, so
    a writer made before a fork works in the child."""

    def __init__(
        self, store: HistoryStore, *, interval_s: float = 0.1, max_batch: int = 500
    ) -> None:
        self.store = store
        self.interval_s = interval_s
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[CallRecord | Callable[[], CallRecord] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def put(self, record: CallRecord) -> None:
        self._ensure_thread()
        self._queue.put(record)

    def put_later(self, make: Callable[[], CallRecord]) -> None:
        """Queue a row that `make` builds on the writer's thread, off the caller's path."""
        self._ensure_thread()
        self._queue.put(make)

    def flush(self, timeout_s: float = 10.0) -> None:
        """Write everything queued so far and stop the thread (a later `put` restarts it)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout_s)

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="history-writer", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            batch = [] if first is None else [first]
            stopping = first is None
            while not stopping and len(batch) < self.max_batch:
                try:
                    item = self._queue.get(timeout=self.interval_s)
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                else:
                    batch.append(item)
            rows = [row for row in map(_made, batch) if row is not None]
            try:
                self.store.write_many(rows)
            except Exception:  # never let one bad batch stop the thread
                log.exception("history batch of %d rows failed", len(rows))


def _made(item: CallRecord | Callable[[], CallRecord]) -> CallRecord | None:
    """The row, or None (logged) when making it failed: one bad row loses no other."""
    if isinstance(item, CallRecord):
        return item
    try:
        return item()
    except Exception:
        log.exception("a history row could not be made")
        return None

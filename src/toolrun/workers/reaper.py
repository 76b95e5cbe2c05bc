"""Settling the calls of lost workers, within about 4/3 of `worker_ttl_s` of the loss.

A worker whose main process dies (or whose machine goes away) leaves its messages in the
broker's unacknowledged set, which Redis would hand out again only after the visibility
timeout — above the longest hard time limit, so many minutes. Every worker's main process
runs a reaper; one at a time (a lock in Redis) sweeps that set every third of
`worker_ttl_s` and, for each message:

- a call running on a worker that is no longer alive (`workers.presence`): run again
  (the message handed back to its queue) when its tool is safe to run twice, otherwise
  ended at once as an error saying the tool started and its effects are unknown (the
  message dropped) — never a silent second run;
- a call still queued whose message was taken by a worker that is no longer alive (each
  worker notes the calls it takes, in the round trip that records the message as
  unacknowledged: `workers.broker`), or by none noted for twice `worker_ttl_s`: handed
  back to its queue;
- a call that has ended whose message is still taken after `worker_ttl_s` (its worker
  died before acknowledging): handed back, and the worker that receives it finds it
  ended and does nothing;
- a call queued more than twice `worker_ttl_s` ago, never started, whose message the
  broker holds nowhere (taken by a worker killed before it could mark it taken — kombu
  pops a message, then records it as unacknowledged): sent again from the envelope kept
  with its record until a worker starts it; one recorded but never put in its agent's
  list (`calls.fairness`: its sender died in between) is put there.

The message layout is kombu's Redis transport's (its QoS object does the moves).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import redis
from celery import Celery, bootsteps
from pydantic import ValidationError

from toolrun.calls import keys
from toolrun.calls.endings import Endings
from toolrun.calls.envelope import Envelope
from toolrun.calls.store import CallStore
from toolrun.calls.wiring import fair_publisher, platform_endings
from toolrun.config import Settings
from toolrun.tools.model import ToolResult, ToolStatus
from toolrun.workers.broker import held_task_ids
from toolrun.workers.dispatch import FairPublisher
from toolrun.workers.presence import alive_workers
from toolrun.workers.runtime import WorkerRuntime, lost_after_start
from toolrun.workers.task_events import TaskEvents, publish

log = logging.getLogger(__name__)


@dataclass
class Reaper:
    """One worker's reaper (see the module); `sweep` once, or `start` a daemon thread.

    It runs in the worker's main process, which forks pool processes at any time: its
    Redis client and broker connections are its own, never the ones pool processes
    inherit and use (a lock held by this thread at a fork would hang them).
    """

    settings: Settings
    endings: Endings  # on a Redis client of the reaper's own
    celery: Celery
    name: str  # this worker's, holding the lock while it sweeps
    publisher: FairPublisher  # also on that client
    _stop: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def of(cls, runtime: WorkerRuntime, celery: Celery, client: redis.Redis) -> Reaper:
        """The reaper of the worker running `runtime`, talking to Redis through `client`."""
        settings = runtime.settings
        store = CallStore(client, ttl_s=settings.call_ttl_s)
        endings = platform_endings(settings, store, history=None)
        return cls(
            settings, endings, celery, runtime.name, fair_publisher(settings, client, celery)
        )

    @property
    def store(self) -> CallStore:
        return self.endings.store

    @property
    def every_s(self) -> float:
        return self.settings.worker_ttl_s / 3

    def start(self) -> None:
        threading.Thread(target=self._loop, name="reaper", daemon=True).start()

    def consumer_step(self) -> type[bootsteps.StartStopStep]:
        """A step of the worker's consumer that hands back, each time the consumer
        (re)starts, what this worker held when its connection was lost."""
        reaper = self

        class HandBackHeld(bootsteps.StartStopStep):
            requires = ("celery.worker.consumer.tasks:Tasks",)

            def start(self, consumer: Any) -> None:
                try:
                    reaper.hand_back_held()
                except Exception as exc:  # the broker away again: the next restart tries
                    log.warning("handing back held messages failed (%r)", exc)

        return HandBackHeld

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        ready_at = time.monotonic() + self.settings.worker_ttl_s  # see below
        while not self._stop.wait(self.every_s):
            try:
                self.publisher.pump_all()  # a pump lost with a process is made up here
                if time.monotonic() >= ready_at and self._my_turn():
                    self.sweep()
                    self.send_lost()
            except Exception as exc:  # Redis away, a broken message: the next round tries
                log.warning("reaping lost workers' calls failed (%r); trying again", exc)
                # After an outage every worker's presence may have lapsed: give them all
                # one TTL to say they are alive before any is taken for lost.
                ready_at = time.monotonic() + self.settings.worker_ttl_s

    def _my_turn(self) -> bool:
        client = self.store.client
        return bool(client.set(keys.REAPER_LOCK, self.name, nx=True, px=int(self.every_s * 900)))

    def sweep(self) -> list[str]:
        """One pass over the unacknowledged messages; returns the ids of the calls it
        settled or handed back."""
        alive = alive_workers(self.store.client)
        now, ttl_s = time.time(), self.settings.worker_ttl_s
        handled = []
        with self.celery.connection() as connection:  # its own, not the app's pool
            channel: Any = connection.default_channel  # kombu's Redis transport's
            qos = channel.qos
            for taken in self._taken(qos):
                current = self.store.get(taken.call_id)
                if current is None:
                    continue  # its record is gone: the broker's to restore, in time
                action = self._action(current, alive, taken, (now - taken.at) / ttl_s)
                if action == "requeue":
                    self._hand_back(qos, taken)
                elif action == "end":
                    if self._end_lost(current, taken):
                        qos.reject(taken.tag, requeue=False)
                else:
                    continue
                log.warning(
                    "call %s of a lost worker: %s",
                    current.call_id,
                    "handed back to its queue" if action == "requeue" else "ended",
                    extra={"call_id": current.call_id},
                )
                handled.append(current.call_id)
        return handled

    def send_lost(self) -> list[str]:
        """Send again the calls queued more than twice the TTL ago, never started, whose
        message the broker holds nowhere (lost: a worker killed as it took it, before it
        could mark it taken). Returns their ids."""
        cutoff = time.time() - 2 * self.settings.worker_ttl_s
        waiting = {
            call_id: Envelope.model_validate_json(raw)
            for call_id, raw in self.store.sent_before(cutoff).items()
        }
        if not waiting:
            return []
        client = self.store.client
        held = held_task_ids(client, {envelope.queue for envelope in waiting.values()})
        sent = []
        for call_id, envelope in waiting.items():
            if call_id in held:
                continue
            current = self.store.get(call_id)
            if current is None or current.status is not ToolStatus.QUEUED:
                self.store.unsend(call_id)
                continue
            fair = self.publisher.queues
            if fair.is_fair(envelope.queue) and not fair.handed_out(envelope.queue, call_id):
                # Recorded, never put in its agent's list (its sender died in between).
                self.publisher.send(envelope, envelope.redaction())
                log.warning("call %s: recorded but never queued; queued now", call_id)
            else:
                self.publisher.send_again(envelope)
                self.store.sent_again(call_id, time.time())
                log.warning("call %s: its message was lost; sent again", call_id)
            sent.append(call_id)
        return sent

    def hand_back_held(self) -> list[str]:
        """Hand back to their queues the messages this worker took before it lost its
        broker connection: Celery then stopped every call it was running (their late
        acknowledgement could not be sent), and the messages it tried to give back while
        the broker was away are still taken. Run as the worker's consumer (re)starts."""
        handed = []
        with self.celery.connection() as connection:
            channel: Any = connection.default_channel
            qos = channel.qos
            for taken in self._taken(qos):
                if taken.holder == self.name:
                    self._hand_back(qos, taken)
                    handed.append(taken.call_id)
        if handed:
            log.warning(
                "messages of calls stopped at a broker connection loss handed back: %s", handed
            )
        return handed

    def _hand_back(self, qos: Any, taken: _Taken) -> None:
        """The message back to its queue, held by nobody until a worker takes it again:
        its holder forgotten first, while nobody can take it (a worker that takes it
        after the restore notes itself, which must stay)."""
        self.store.client.hdel(keys.HOLDERS, taken.call_id)
        qos.restore_by_tag(taken.tag, client=self.store.client)

    def _taken(self, qos: Any) -> list[_Taken]:
        """The broker's unacknowledged messages of calls, with who took each and when."""
        client = self.store.client
        indexed: Any = client.zrange(qos.unacked_index_key, 0, -1, withscores=True)
        taken_at: dict[Any, float] = dict(indexed)
        raw: Any = client.hgetall(qos.unacked_key)
        found = []
        for tag, entry in raw.items():
            message = json.loads(entry)[0]
            call_id = message.get("headers", {}).get("id")
            if call_id:
                at = taken_at.get(tag, time.time())
                found.append(_Taken(tag, call_id, _envelope(message), at, None))
        holders = self.store.holders([taken.call_id for taken in found])
        return [
            dataclasses.replace(taken, holder=holder)
            for taken, holder in zip(found, holders, strict=True)
        ]

    @staticmethod
    def _action(
        current: ToolResult, alive: set[str], taken: _Taken, held_ttls: float
    ) -> str | None:
        """ "requeue", "end", or None (leave the message where it is); `held_ttls`: for
        how long the message has been taken, in worker TTLs."""
        if current.status is ToolStatus.RUNNING:
            runner = current.metadata.get("worker_id")
            if runner is None or runner in alive:
                return None
            repeat_safe = taken.envelope is not None and taken.envelope.repeat_safe
            return "requeue" if repeat_safe else "end"
        if current.status is ToolStatus.QUEUED:
            holder = taken.holder
            lost = holder not in alive if holder is not None else held_ttls > 2
            return "requeue" if lost else None
        if current.final:
            return "requeue" if held_ttls > 1 else None
        return None

    def _end_lost(self, current: ToolResult, taken: _Taken) -> bool:
        """End a running call of a lost worker whose tool must not run twice."""
        starts = int(self.store.client.get(keys.deliveries(current.call_id)) or 1)
        current.status = ToolStatus.ERROR
        current.error = lost_after_start(f"{current.tool_name}@{current.tool_version}", starts)
        current.metadata.update(deliveries=starts, tool_starts=starts)
        envelope = taken.envelope
        if envelope is None:  # unreadable: nothing of its arguments is stored
            stored = self.endings.finish(current, {}, None).stored
        else:
            arguments, secrets = envelope.call.arguments, envelope.redaction()
            stored = self.endings.finish(current, arguments, secrets).stored
        if stored:  # its message is dropped, so no worker takes it again: Flower hears it here
            failed = TaskEvents(self.celery).delivery(current.call_id, None).ended(current)
            publish(self.store.client, current.call_id, [failed])
        return stored


@dataclass(frozen=True)
class _Taken:
    """An unacknowledged message of a call."""

    tag: Any  # its delivery tag in the broker
    call_id: str
    envelope: Envelope | None  # None: the message is not one this version reads
    at: float  # when it was taken
    holder: str | None  # the worker that noted it took it


def _envelope(message: dict[str, Any]) -> Envelope | None:
    """The call's envelope, from its message (None when it cannot be read)."""
    with contextlib.suppress(ValueError, KeyError, IndexError, TypeError, ValidationError):
        args = json.loads(base64.b64decode(message["body"]))[0]
        return Envelope.model_validate(args[0])
    return None

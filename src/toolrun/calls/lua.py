"""Lua scripts run on a connection each thread keeps, not through redis-py's client layer.

Every call runs a few of toolrun's scripts (queueing it, starting it, ending it). Through
`redis.Redis.register_script` each costs nearly twice the CPU of its own round trip:
taking a connection from the pool and giving it back, decorators that inspect signatures,
metrics recorded whether or not anyone reads them (80-120 µs of CPU per script on these
machines, against 50-60 here). `LuaScript` sends EVALSHA on a connection of its own
thread, made with the client pool's settings (the same server, password, timeouts and
retry policy), and reads the reply as redis-py would.

What stays as redis-py does it: a connection the server closed while it was idle (a
restart, CLIENT KILL) is made again before the script is sent on it; a connection or
timeout error is retried under the pool's retry policy, the connection closed in between;
a reply cut off by any exception (a soft time limit, say) closes the connection, so the
next script starts on a fresh one; a server that lost the script (NOSCRIPT: restarted,
flushed) is sent it again. A forked process makes its own connection rather than share
its parent's.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import redis
from redis.connection import AbstractConnection
from redis.exceptions import NoScriptError

KeyOrArg = str | bytes | int | float


class _Kept(threading.local):
    """One thread's connection to one client's server, with the process that made it."""

    connection: AbstractConnection | None = None
    pid: int = 0


# A client's kept connections (one per thread), dropped with the client.
_KEPT: weakref.WeakKeyDictionary[redis.Redis, _Kept] = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


def _kept(client: redis.Redis) -> _Kept:
    with _KEPT_LOCK:
        return _KEPT.setdefault(client, _Kept())


def kept_connection(client: redis.Redis, kept: _Kept | None = None) -> AbstractConnection:
    """This thread's own connection to `client`'s server (made at first use); `kept`:
    `client`'s, when the caller has it at hand."""
    kept = kept or _kept(client)
    pid = os.getpid()
    if kept.connection is None or kept.pid != pid:
        pool = client.connection_pool
        kept.connection = pool.connection_class(**pool.connection_kwargs)
        kept.pid = pid
    return kept.connection


class LuaScript:
    """A Lua script of `source`, run on `client`'s server: `script(keys=..., args=...)`
    returns its reply as `redis.Redis.register_script`'s scripts do."""

    def __init__(self, client: redis.Redis, source: str) -> None:
        self.client = client
        self.source = source
        # The name Redis gives the script (SHA-1 is its choice, not a safeguard).
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()
        self._kept = _kept(client)

    def __call__(self, keys: Sequence[KeyOrArg] = (), args: Iterable[KeyOrArg] = ()) -> Any:
        connection = _ready(kept_connection(self.client, self._kept))
        command = ("EVALSHA", self.sha, len(keys), *keys, *args)
        return connection.retry.call_with_retry(
            lambda: self._run(connection, command),
            lambda _error: connection.disconnect(),  # type: ignore[no-untyped-call]
        )

    def _run(self, connection: AbstractConnection, command: tuple[Any, ...]) -> Any:
        try:
            return _round_trip(connection, command)
        except NoScriptError:  # the server does not know it (yet, or any more)
            _round_trip(connection, ("SCRIPT", "LOAD", self.source))
            return _round_trip(connection, command)


def _ready(connection: AbstractConnection) -> AbstractConnection:
    """`connection`, connected, with nothing waiting to be read: as redis-py's pool checks
    a connection it hands out, one the server closed while it was idle (a restart, an
    idle timeout, CLIENT KILL) is made again before the script is sent on it."""
    try:
        connection.connect()  # type: ignore[no-untyped-call]  # a no-op when connected
        if connection.can_read():
            raise redis.ConnectionError("the connection has data nobody asked for")
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        connection.disconnect()  # type: ignore[no-untyped-call]
        connection.connect()  # type: ignore[no-untyped-call]
    return connection


def _round_trip(connection: AbstractConnection, command: tuple[Any, ...]) -> Any:
    connection.send_command(*command)  # type: ignore[no-untyped-call]
    return connection.read_response()

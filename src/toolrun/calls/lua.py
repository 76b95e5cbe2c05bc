"""Lua scripts run on a connection each thread keeps, not through redis-py's client layer.

Every call runs a few of toolrun's scripts (queueing it, starting it, ending it). Through
`redis.Redis.register_script` each costs nearly twice the CPU of its own round trip:
taking a connection from the pool and giving it back, decorators that inspect signatures,
metrics recorded whether or not anyone reads them (70-120 µs of CPU per script on these
machines, against 43-63 here: bench/README.md). `LuaScript` sends EVALSHA on a connection of its own
thread, made with the client pool's settings (the same server, password, timeouts and
retry policy), and reads the reply as redis-py would.

What stays as redis-py does it: a connection the server closed while it was idle (a
restart, CLIENT KILL) is made again before the script is sent on it; a connection or
timeout error is retried under the pool's retry policy, the connection closed in between;
a round trip cut off by any exception (a soft time limit, say), even between the command
and its reply, closes the connection, so the next script starts on a fresh one; a server
that lost the script (NOSCRIPT: restarted, flushed) is sent it again. A forked process
makes its own connection rather than share its parent's; a thread's is closed when the
thread ends. What redis-py's scripts offer besides is not: running in a pipeline, keys
given as None, the client's own encoding of the source (toolrun's scripts are ASCII).

`LuaScript.send` sends a script and leaves its reply to be read later (`Reply.get`), so
that the thread does other work while the server runs it: a worker checks the call it
was handed while its start is recorded. A script sent on the same connection before
then reads the earlier reply first, so neither is lost or misread; a reply that did not
come (the connection broke) or a script the server lost is run once more as a round trip
of its own (`__call__`). A reply dropped unread leaves its connection to be made again.
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


class _Held:
    """A thread's connection, with the process that made it and whether a round trip on
    it was cut off between its command and its reply (`busy`). Closed when dropped: a
    thread that ends, a forked process that makes its own (which closes only its copy of
    the socket). A connection alone would wait for the cyclic garbage collector."""

    def __init__(self, connection: AbstractConnection) -> None:
        self.connection = connection
        self.pid = os.getpid()
        self.busy = False
        # The reply sent for and not yet read, weakly: a Reply dropped unread leaves the
        # connection busy, made again before its next use (and no cycle to collect).
        self.pending: weakref.ref[Reply] | None = None

    def __del__(self) -> None:
        # Not contextlib.suppress: at interpreter exit this module's globals may be gone.
        try:  # noqa: SIM105
            self.connection.disconnect()  # type: ignore[no-untyped-call]
        except Exception:  # noqa: S110 - a socket gone already, an interpreter exiting
            pass


class _Kept(threading.local):
    """Each thread's connection to one client's server."""

    held: _Held | None = None


# A client's kept connections (one per thread), dropped with the client.
_KEPT: weakref.WeakKeyDictionary[redis.Redis, _Kept] = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


def _kept(client: redis.Redis) -> _Kept:
    with _KEPT_LOCK:
        return _KEPT.setdefault(client, _Kept())


def _held(client: redis.Redis, kept: _Kept) -> _Held:
    held = kept.held
    if held is None or held.pid != os.getpid():
        pool = client.connection_pool
        held = kept.held = _Held(pool.connection_class(**pool.connection_kwargs))
    return held


def kept_connection(client: redis.Redis) -> AbstractConnection:
    """This thread's own connection to `client`'s server (made at first use). Nothing
    may be sent on it directly while a `Reply` is pending on it."""
    return _held(client, _kept(client)).connection


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
        held = _held(self.client, self._kept)
        connection = _ready(held)
        command = ("EVALSHA", self.sha, len(keys), *keys, *args)
        return connection.retry.call_with_retry(
            lambda: self._run(held, command),
            lambda _error: connection.disconnect(),  # type: ignore[no-untyped-call]
        )

    def send(self, keys: Sequence[KeyOrArg] = (), args: Iterable[KeyOrArg] = ()) -> Reply:
        """Send the script and return at once: its reply is read by `Reply.get`, on this
        thread."""
        held = _held(self.client, self._kept)
        connection = _ready(held)
        arguments = tuple(args)
        command = ("EVALSHA", self.sha, len(keys), *keys, *arguments)

        def send() -> Reply:
            held.busy = True
            connection.send_command(*command)  # type: ignore[no-untyped-call]
            reply = Reply(self, held, keys, arguments)
            held.pending = weakref.ref(reply)
            return reply

        return connection.retry.call_with_retry(
            send,
            lambda _error: connection.disconnect(),  # type: ignore[no-untyped-call]
        )

    def _run(self, held: _Held, command: tuple[Any, ...]) -> Any:
        try:
            return _round_trip(held, command)
        except NoScriptError:  # the server does not know it (yet, or any more)
            _round_trip(held, ("SCRIPT", "LOAD", self.source))
            return _round_trip(held, command)


def _ready(held: _Held) -> AbstractConnection:
    """`held`'s connection, connected, with nothing waiting to be read. As redis-py's pool
    checks a connection it hands out, one the server closed while it was idle (a restart,
    CLIENT KILL) is made again; so is one whose last round trip was cut off after its
    command was sent (an exception raised by a signal handler, such as a soft time
    limit), whose reply may still be on its way."""
    connection = held.connection
    pending = None if held.pending is None else held.pending()
    if pending is not None:  # read before anything else is sent on the connection
        pending.collect()
    if held.busy:
        connection.disconnect()  # type: ignore[no-untyped-call]
        held.busy = False
    connection.connect()  # type: ignore[no-untyped-call]  # a no-op when connected
    try:
        if connection.can_read():
            raise redis.ConnectionError("the connection has data nobody asked for")
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        connection.disconnect()  # type: ignore[no-untyped-call]
        connection.connect()  # type: ignore[no-untyped-call]
    return connection


def _round_trip(held: _Held, command: tuple[Any, ...]) -> Any:
    """Send `command` on `held`'s connection and read its reply (an error reply raises
    once it is read: the connection is ready for the next)."""
    connection = held.connection
    held.busy = True
    connection.send_command(*command)  # type: ignore[no-untyped-call]
    try:
        reply = connection.read_response()
    except redis.ResponseError:
        held.busy = False
        raise
    held.busy = False
    return reply


class Reply:
    """The reply of a script `LuaScript.send` sent: `get()` reads it (on the thread that
    sent it) or returns it, read already because another command needed the connection."""

    def __init__(
        self,
        script: LuaScript,
        held: _Held,
        keys: Sequence[KeyOrArg],
        args: tuple[KeyOrArg, ...],
    ) -> None:
        self._script = script
        self._held = held
        self._keys = keys
        self._args = args
        self._read = False
        self._value: Any = None
        self._error: Exception | None = None

    def collect(self) -> None:
        """Read the reply off the connection now and keep it for `get`. A read cut off by
        an exception that is not the connection's (a soft time limit) leaves the
        connection to be made again before its next use, and is raised."""
        held = self._held
        held.pending = None
        self._read = True
        # Until a reply is read, it is one that did not come.
        self._error = redis.ConnectionError("the reply was cut off before it was read")
        try:
            self._value = held.connection.read_response()
        except redis.ResponseError as exc:  # a whole reply, read: the connection is ready
            self._error = exc
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            self._error = exc
            held.connection.disconnect()  # type: ignore[no-untyped-call]
        else:
            self._error = None
        # Not reached when anything else is raised (a soft time limit): the connection
        # stays busy, so it is made again before its next use.
        held.busy = False

    def get(self) -> Any:
        """The script's reply; a script the server had lost, or whose reply did not come,
        is run once more as a round trip of its own (`__call__`: loaded again, and
        retried under the pool's policy); an error reply raises."""
        if not self._read:
            self.collect()
        error = self._error
        if error is None:
            return self._value
        if isinstance(error, NoScriptError | redis.ConnectionError | redis.TimeoutError | OSError):
            return self._script(keys=self._keys, args=self._args)
        raise error

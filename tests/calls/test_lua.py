"""Lua scripts on a kept connection (`calls.lua`), on a real Redis: the replies of
redis-py's scripts, a script the server lost sent again, a connection the server closed
made again, a failed script leaving the connection usable, and a connection of each
thread's and each process's own."""

from __future__ import annotations

import threading

import pytest
import redis
from tests.forked import in_forked_child

from toolrun.calls.lua import LuaScript, kept_connection

ECHO = "return {KEYS[1], ARGV[1], tonumber(ARGV[2]) + 1}"


def test_replies_as_redis_pys_scripts(redis_client: redis.Redis) -> None:
    ours = LuaScript(redis_client, ECHO)
    theirs = redis_client.register_script(ECHO)
    assert ours.sha == theirs.sha
    assert ours(keys=["k"], args=["v", 41]) == theirs(keys=["k"], args=["v", 41])
    assert ours(keys=["k"], args=["v", 41]) == [b"k", b"v", 42]


def test_a_script_the_server_lost_is_sent_again(redis_client: redis.Redis) -> None:
    script = LuaScript(redis_client, ECHO)
    assert script(keys=["a"], args=["b", 1]) == [b"a", b"b", 2]
    redis_client.script_flush()
    assert redis_client.script_exists(script.sha) == [False]
    assert script(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]
    assert redis_client.script_exists(script.sha) == [True]


def client_address(client: redis.Redis) -> str:
    """host:port of this thread's kept connection to `client`'s server, as the server
    names its client."""
    connection = kept_connection(client)
    host, port = connection._sock.getsockname()[:2]  # type: ignore[attr-defined]
    return f"{host}:{port}"


def test_a_connection_the_server_closed_is_made_again(redis_client: redis.Redis) -> None:
    script = LuaScript(redis_client, ECHO)
    script(keys=["a"], args=["b", 1])
    first = client_address(redis_client)
    assert redis_client.client_kill_filter(_type=None, addr=first) == 1
    # Noticed before the script is sent (as redis-py's pool checks what it hands out).
    assert script(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]
    second = client_address(redis_client)
    assert second != first
    script(keys=["a"], args=["d", 3])
    assert client_address(redis_client) == second  # and kept


def test_a_failed_script_raises_and_leaves_the_connection_usable(
    redis_client: redis.Redis,
) -> None:
    redis_client.set("text", "not a list")
    failing = LuaScript(redis_client, "return redis.call('LPUSH', KEYS[1], 1)")
    echo = LuaScript(redis_client, ECHO)
    echo(keys=["a"], args=["b", 1])
    before = client_address(redis_client)
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        failing(keys=["text"])
    assert echo(keys=["a"], args=["b", 1]) == [b"a", b"b", 2]
    assert client_address(redis_client) == before


def test_each_thread_keeps_its_own_connection(redis_client: redis.Redis) -> None:
    script = LuaScript(redis_client, ECHO)
    seen: list[tuple[object, object]] = []

    def run() -> None:
        script(keys=["a"], args=["b", 1])
        first = kept_connection(redis_client)
        script(keys=["a"], args=["b", 1])
        seen.append((first, kept_connection(redis_client)))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run()  # this thread too
    assert all(first is again for first, again in seen)
    connections = [first for first, _ in seen]
    assert len({id(connection) for connection in connections}) == 4


def test_scripts_of_one_client_share_the_threads_connection(redis_client: redis.Redis) -> None:
    one, other = LuaScript(redis_client, ECHO), LuaScript(redis_client, ECHO + " -- other")
    one(keys=["a"], args=["b", 1])
    first = client_address(redis_client)
    other(keys=["a"], args=["b", 1])
    assert client_address(redis_client) == first


def test_a_forked_process_makes_its_own_connection(redis_client: redis.Redis) -> None:
    script = LuaScript(redis_client, ECHO)
    script(keys=["a"], args=["b", 1])
    parent = client_address(redis_client)

    def in_child() -> str:
        assert script(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]
        return client_address(redis_client)

    assert in_forked_child(in_child) != parent
    assert script(keys=["a"], args=["b", 1]) == [b"a", b"b", 2]
    assert client_address(redis_client) == parent  # the parent's connection was left alone


def test_a_round_trip_cut_off_before_its_reply_is_not_read_by_the_next(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A script slow enough that its reply has not come when the next one is sent.
    source = "for i = 1, 3000000 do end return 'slow'"
    slow = LuaScript(redis_client, source)
    redis_client.script_load(source)  # so that EVALSHA runs it, rather than answer NOSCRIPT
    echo = LuaScript(redis_client, ECHO)
    echo(keys=["a"], args=["b", 1])
    connection = kept_connection(redis_client)

    class Interrupted(Exception):
        """As a soft time limit lands between a command and its reply."""

    def cut_off(*_args: object, **_kwargs: object) -> object:
        raise Interrupted

    monkeypatch.setattr(connection, "read_response", cut_off)
    with pytest.raises(Interrupted):
        slow()
    monkeypatch.undo()
    assert echo(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]  # not the slow one's 'slow'


def test_a_threads_connection_is_closed_when_the_thread_ends(redis_client: redis.Redis) -> None:
    script = LuaScript(redis_client, ECHO)
    seen: list[str] = []

    def run() -> None:
        script(keys=["a"], args=["b", 1])
        seen.append(client_address(redis_client))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    addresses = {client["addr"] for client in redis_client.client_list()}
    assert seen[0] not in addresses


COUNT = "return redis.call('INCR', KEYS[1])"


def test_a_sent_scripts_reply_is_read_later_even_after_another_script(
    redis_client: redis.Redis,
) -> None:
    counter, echo = LuaScript(redis_client, COUNT), LuaScript(redis_client, ECHO)
    counter(keys=["sent"])  # loaded: EVALSHA runs it
    sent = counter.send(keys=["sent"])
    # The same connection is used meanwhile: the earlier reply is read first, not taken
    # for this one's.
    assert echo(keys=["a"], args=["b", 1]) == [b"a", b"b", 2]
    assert sent.get() == 2
    assert sent.get() == 2  # kept, not read again
    second = counter.send(keys=["sent"])
    assert second.get() == 3
    assert redis_client.get("sent") == b"3"


def test_a_sent_script_the_server_lost_runs_once_when_its_reply_is_read(
    redis_client: redis.Redis,
) -> None:
    counter = LuaScript(redis_client, COUNT + " -- lost")
    redis_client.script_flush()
    sent = counter.send(keys=["lost"])  # answered NOSCRIPT: nothing ran
    assert redis_client.get("lost") is None
    assert sent.get() == 1  # loaded and run as a round trip of its own
    assert redis_client.get("lost") == b"1"


def test_a_sent_scripts_error_is_raised_by_get_and_leaves_the_connection_usable(
    redis_client: redis.Redis,
) -> None:
    redis_client.set("text", "not a number")
    counter, echo = LuaScript(redis_client, COUNT), LuaScript(redis_client, ECHO)
    echo(keys=["a"], args=["b", 1])
    before = client_address(redis_client)
    counter(keys=["loaded"])
    sent = counter.send(keys=["text"])
    with pytest.raises(redis.ResponseError, match="not an integer"):
        sent.get()
    assert echo(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]
    assert client_address(redis_client) == before


def test_a_sent_script_whose_read_is_cut_off_leaves_no_reply_for_the_next(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "for i = 1, 3000000 do end return 'slow'"
    slow = LuaScript(redis_client, source)
    redis_client.script_load(source)
    echo = LuaScript(redis_client, ECHO)
    echo(keys=["a"], args=["b", 1])
    connection = kept_connection(redis_client)

    class Interrupted(Exception):
        """As a soft time limit lands while the worker waits for the reply."""

    sent = slow.send()

    def cut_off(*_args: object, **_kwargs: object) -> object:
        raise Interrupted

    monkeypatch.setattr(connection, "read_response", cut_off)
    with pytest.raises(Interrupted):
        sent.get()
    monkeypatch.undo()
    assert echo(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]  # not the slow one's 'slow'


def test_a_sent_script_whose_connection_broke_is_run_again_as_a_round_trip(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    echo = LuaScript(redis_client, ECHO)
    echo(keys=["a"], args=["b", 1])
    connection = kept_connection(redis_client)
    sent = echo.send(keys=["a"], args=["c", 2])

    def broken(*_args: object, **_kwargs: object) -> object:
        raise redis.ConnectionError("Connection closed by server.")

    monkeypatch.setattr(connection, "read_response", broken)
    try:
        sent.collect()  # as the worker's read would find it
    finally:
        monkeypatch.undo()
    assert sent.get() == [b"a", b"c", 3]


def test_a_sent_scripts_reply_dropped_unread_is_not_taken_for_the_next(
    redis_client: redis.Redis,
) -> None:
    counter, echo = LuaScript(redis_client, COUNT), LuaScript(redis_client, ECHO)
    counter(keys=["dropped"])
    counter.send(keys=["dropped"])  # its Reply is dropped at once, its answer never read
    assert echo(keys=["a"], args=["c", 2]) == [b"a", b"c", 3]  # not the counter's 2
    assert redis_client.get("dropped") == b"2"

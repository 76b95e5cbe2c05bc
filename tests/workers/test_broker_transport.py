"""toolrun's Celery apps use kombu's Redis transport with one Redis client per connection
pool, and a worker notes which calls' messages it takes (`workers.broker.Transport`):
messages sent, taken, noted unacknowledged and acknowledged through it, against a real
Redis."""

from __future__ import annotations

import pytest
import redis
from kombu import Exchange, Queue

from toolrun.calls.store import CallStore
from toolrun.config import Settings
from toolrun.workers.app import create_celery_app
from toolrun.workers.broker import Transport


def test_a_message_goes_through_with_one_client_per_pool(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_celery_app(Settings(redis_url=redis_url))
    queue = Queue("tests.transport", Exchange("tests.transport", "direct"), "tests.transport")
    built = []
    original = Transport.Channel.__mro__[1]._create_client  # kombu's own

    def counted(channel: object, asynchronous: bool = False) -> object:
        built.append(asynchronous)
        return original(channel, asynchronous)

    monkeypatch.setattr(Transport.Channel.__mro__[1], "_create_client", counted)
    try:
        with app.connection_for_write() as connection:
            assert isinstance(connection.transport, Transport)
            channel = connection.default_channel
            producer = connection.Producer(channel)
            for n in range(5):
                producer.publish(
                    {"n": n},
                    exchange=queue.exchange,
                    routing_key="tests.transport",
                    declare=[queue],
                )
            taken = []
            for _ in range(5):
                message = queue(channel).get(no_ack=False)  # noted unacknowledged
                assert message is not None
                taken.append(message.payload["n"])
                message.ack()
            sync_clients = built.count(False)
            channel._pool = None  # as kombu does when it drops its connections
            channel._create_client()
    finally:
        app.close()

    assert taken == [0, 1, 2, 3, 4]
    assert sync_clients == 1  # kombu's own builds one per command: 28 here
    assert built.count(False) == 2  # a new pool: a new client


@pytest.mark.parametrize("holder", ["read_only@host/42", None])
def test_a_worker_notes_each_call_it_takes_in_the_same_round_trip(
    redis_url: str, redis_client: redis.Redis, holder: str | None
) -> None:
    """As its consumer takes a call's message (kombu records it unacknowledged), the
    worker its app was made for is noted as the call's holder (the reapers read it); a
    connection of no worker notes nothing; the ending (`CallStore.finish`) clears it."""
    app = create_celery_app(Settings(redis_url=redis_url), worker=holder)
    queue = Queue("tests.transport", Exchange("tests.transport", "direct"), "tests.transport")
    try:
        with app.connection_for_write() as connection:
            channel = connection.default_channel
            producer = connection.Producer(channel)
            producer.publish(
                {"n": 1},
                exchange=queue.exchange,
                routing_key="tests.transport",
                declare=[queue],
                headers={"id": "call-1"},
            )
            message = queue(channel).get(no_ack=False)
            assert message is not None
            noted = CallStore(redis_client, ttl_s=60).holders(["call-1"])
            message.ack()
    finally:
        app.close()

    assert noted == [holder]

"""A worker started while its broker is down waits for it instead of failing its start."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from toolrun.embedded import RedisServer
from toolrun.workers.broker import wait_for_broker


def test_waits_until_the_broker_answers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server = RedisServer(tmp_path / "redis")  # its port chosen, nothing listening yet
    # No retries inside redis-py: each ping is one try.
    client = redis.Redis(port=server.port, password=server.password, retry=Retry(NoBackoff(), 0))
    later = threading.Timer(1.0, server.start)
    later.start()
    began = time.monotonic()
    try:
        with caplog.at_level(logging.WARNING, logger="toolrun.workers.broker"):
            wait_for_broker(client)
        assert time.monotonic() - began >= 1.0
        assert client.ping()
        said = [record.getMessage() for record in caplog.records]
        assert said[0].startswith("the broker does not answer")
        assert said[-1] == "the broker answers again"
    finally:
        later.join()
        server.stop()
        client.close()


def test_an_answering_broker_is_not_waited_for_and_a_wrong_password_is_no_wait(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    client = redis.Redis(port=server.port, password=server.password)
    wrong = redis.Redis(
        port=server.port, password=server.password + "x", retry=Retry(NoBackoff(), 0)
    )
    try:
        with caplog.at_level(logging.WARNING, logger="toolrun.workers.broker"):
            wait_for_broker(client)
        assert caplog.records == []  # it answered: nothing to say
        with pytest.raises(redis.AuthenticationError):
            wait_for_broker(wrong)  # waiting would not mend a wrong password
    finally:
        server.stop()
        client.close()
        wrong.close()

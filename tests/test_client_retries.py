"""The SDK's clients send a request refused with Retry-After (429 over a quota, 503 a full
queue) again after that wait, a bounded number of times; without Retry-After, or with
retries=0, they raise at once with the wait the API asked for (`ApiError.retry_after_s`).
The API's side is tested against a real platform in tests/integration/test_fairness.py."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from toolrun import client as sdk
from toolrun.client import ApiError, AsyncClient, Client

RESULT = {"call_id": "c1", "tool_name": "read", "status": "success", "metadata": {}}


class Server:
    """Answers each request with the next of `codes` (200: a result), the refusals with
    `retry_after` (none when empty); `pending`: the answers not given yet."""

    def __init__(self, *codes: int, retry_after: str = "0") -> None:
        self.pending = list(codes)
        self.retry_after = retry_after

    def __call__(self, request: httpx.Request) -> httpx.Response:
        code = self.pending.pop(0)
        if code == 200:
            return httpx.Response(200, json=RESULT)
        headers = {"Retry-After": self.retry_after} if self.retry_after else {}
        return httpx.Response(code, json={"detail": "over its quota"}, headers=headers)


def sync_client(handler: Server, retries: int) -> Client:
    client = Client("http://toolrun.test", retries=retries)
    client._http = httpx.Client(
        base_url="http://toolrun.test", transport=httpx.MockTransport(handler)
    )
    return client


def test_a_refusal_with_retry_after_is_sent_again_until_it_passes() -> None:
    handler = Server(429, 503, 200)
    with sync_client(handler, retries=3) as client:
        result = client.call("read", {"file_path": "a"})

    assert result.ok
    assert handler.pending == []


def test_retries_are_bounded_and_the_last_refusal_raised() -> None:
    handler = Server(429, 429, 429)
    with sync_client(handler, retries=2) as client, pytest.raises(ApiError) as refused:
        client.call("read", {"file_path": "a"})

    assert refused.value.status_code == 429
    assert refused.value.retry_after_s == 0.0


def test_without_retry_after_nothing_is_sent_again() -> None:
    handler = Server(503, 200, retry_after="")
    with sync_client(handler, retries=3) as client, pytest.raises(ApiError) as refused:
        client.call("read", {"file_path": "a"})

    assert refused.value.status_code == 503
    assert refused.value.retry_after_s is None
    assert handler.pending == [200]


def test_a_long_retry_after_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(sdk.time, "sleep", waits.append)
    handler = Server(429, 200, retry_after="3600")
    with sync_client(handler, retries=1) as client:
        client.call("read", {"file_path": "a"})

    assert waits == [sdk.MAX_RETRY_WAIT_S]


def test_the_async_client_waits_and_sends_again_too() -> None:
    handler = Server(429, 200)

    async def call() -> bool:
        async with AsyncClient("http://toolrun.test") as client:
            client._http = httpx.AsyncClient(
                base_url="http://toolrun.test", transport=httpx.MockTransport(handler)
            )
            return (await client.call("read", {"file_path": "a"})).ok

    assert asyncio.run(call())
    assert handler.pending == []

"""Integration fixtures: a real Redis, real worker processes, a real API process.

Locally, tests skip when Redis is missing; in CI (CI=true) a missing Redis fails them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.integration.platform import Platform, running
from tests.scripted_model import ScriptedModel

INTEROP = Path(__file__).resolve().parent.parent / "interop"
TEST_REDIS_URL = os.environ.get("TOOLRUN_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in item.path.parts:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def redis_url() -> str:
    client = redis.Redis.from_url(TEST_REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs Redis at {TEST_REDIS_URL}: {exc}")
        pytest.skip(f"no Redis at {TEST_REDIS_URL}")
    client.flushdb()
    client.close()
    return TEST_REDIS_URL


@pytest.fixture(scope="session")
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def platform_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("platform") / "workspace"
    root.mkdir()
    (root / "hello.txt").write_text("hello from the workspace\n")
    return root


@pytest.fixture(scope="session")
def model() -> Iterator[ScriptedModel]:
    """The platform's model endpoint for sub-agents; each test scripts its replies."""
    with ScriptedModel() as server:
        yield server


@pytest.fixture(scope="session")
def platform(
    redis_url: str,
    platform_workspace: Path,
    model: ScriptedModel,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Platform]:
    logs = tmp_path_factory.mktemp("logs")
    setup = Platform(
        redis_url,
        platform_workspace,
        logs,
        extra_env={
            "TOOLRUN_AUTO_APPROVE": "true",
            "TOOLRUN_COMMAND_ALLOWLIST": '["default", "curl"]',
            "TOOLRUN_NETWORK_ALLOWLIST": '["127.0.0.1"]',
            "TOOLRUN_MODEL_BASE_URL": model.url,
            "TOOLRUN_MODEL": "scripted",
            # The test MCP servers run in the tools' jail: their files must be in its view.
            "TOOLRUN_SANDBOX_READ_ONLY_PATHS": json.dumps([str(INTEROP)]),
            "TOOLRUN_SANDBOX_MAX_PROCESSES": "256",
        },
        scheduler=True,
        delegation=True,
    )
    with running(setup) as started:
        yield started


@pytest.fixture
def dag_platform(platform: Platform) -> Platform:
    """The session's platform, which runs the DAG scheduler too."""
    return platform


@pytest.fixture
def api(platform: Platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.base_url, timeout=60, headers=platform.headers) as client:
        yield client

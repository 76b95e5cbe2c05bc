"""docker-compose.yml and deploy/k8s: every toolrun command in them is real and starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.integration.platform import STOP_GRACE_S, free_port, wait_for
from toolrun.embedded import terminate

ROOT = Path(__file__).parents[2]
# The machine's PostgreSQL stands in for the compose `postgres` service.
LOCAL_POSTGRES = os.environ.get(
    "TOOLRUN_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
K8S = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolrun.yaml").read_text()))
TOOLRUN_SERVICES = {
    name: service
    for name, service in COMPOSE["services"].items()
    if service.get("command", [""])[0] == "toolrun"
}


def test_compose_points_every_toolrun_service_at_redis_and_postgres() -> None:
    for service in TOOLRUN_SERVICES.values():
        environment = service["environment"]
        assert environment["TOOLRUN_REDIS_URL"] == "redis://redis:6379/0"
        assert environment["TOOLRUN_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert "@postgres:5432/" in environment["TOOLRUN_DATABASE_URL"]


def test_compose_has_the_platform_services() -> None:
    assert set(COMPOSE["services"]) == {
        "redis",
        "postgres",
        "api",
        "worker-read-only",
        "worker-read-write",
        "worker-execute",
        "worker-admin",
        "worker-delegation",
        "scheduler",
        "flower",
    }


@pytest.mark.parametrize(
    ("service", "mode"),
    [
        ("api", ":ro"),
        ("worker-read-only", ":ro"),
        ("worker-delegation", ":ro"),
        ("worker-read-write", ":/workspace"),
        ("worker-execute", ":/workspace"),
    ],
)
def test_each_worker_mounts_only_what_its_level_needs(service: str, mode: str) -> None:
    (volume,) = COMPOSE["services"][service]["volumes"]
    assert volume.endswith(mode)


def test_k8s_runs_the_same_commands_as_compose() -> None:
    k8s_commands = {
        tuple(container["command"])
        for doc in K8S
        if doc["kind"] == "Deployment"
        for container in doc["spec"]["template"]["spec"]["containers"]
        if container["command"][0] == "toolrun"
    }
    compose_subcommands = {tuple(s["command"][:4]) for s in TOOLRUN_SERVICES.values()}
    assert {command[:4] for command in k8s_commands} == compose_subcommands


def _local_argv(command: list[str], port: int) -> list[str]:
    """The service's command for this machine: same subcommand and options, a free port."""
    argv = [sys.executable, "-m", "toolrun", *command[1:]]
    if "--port" in argv:
        argv[argv.index("--port") + 1] = str(port)
    if "--host" in argv:
        argv[argv.index("--host") + 1] = "127.0.0.1"
    if "--address" in argv:
        argv[argv.index("--address") + 1] = "127.0.0.1"
    return argv


@pytest.mark.parametrize("name", sorted(TOOLRUN_SERVICES))
def test_compose_service_command_starts_against_local_redis(
    name: str, redis_url: str, tmp_path: Path
) -> None:
    service: dict[str, Any] = TOOLRUN_SERVICES[name]
    port = free_port()
    env = {
        **os.environ,
        **{k: str(v) for k, v in service["environment"].items()},
        "TOOLRUN_REDIS_URL": redis_url,
        "TOOLRUN_DATABASE_URL": LOCAL_POSTGRES,
        "TOOLRUN_WORKSPACE": str(tmp_path / "workspace"),
        "TOOLRUN_HOME": str(tmp_path / "home"),  # outside the workspace, as it must be
    }
    (tmp_path / "workspace").mkdir()
    log = tmp_path / "service.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            _local_argv(service["command"], port),
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        if name == "api":
            ready = lambda: httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200  # noqa: E731
        elif name == "flower":
            ready = lambda: httpx.get(f"http://127.0.0.1:{port}/").status_code == 200  # noqa: E731
        elif name == "scheduler":
            ready = lambda: b"scheduler ready" in log.read_bytes()  # noqa: E731
        else:
            ready = lambda: b"ready." in log.read_bytes()  # noqa: E731
        wait_for(ready, 60, f"{name} to come up ({log.read_text(errors='replace')[-500:]})")
        assert process.poll() is None
    finally:
        terminate([process], STOP_GRACE_S)

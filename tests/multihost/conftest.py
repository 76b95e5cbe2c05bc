"""A platform spread over test hosts (see `network.py`): Redis, PostgreSQL and the API on
the core host; workers of the read_only and execute levels on hosts `wa` and `wb`; the
DAG scheduler on host `sc`. Skipped where namespaces cannot be made, failing under CI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from tests.conftest import POSTGRES, postgres_schema
from tests.integration.platform import SUPPORT, admin_token, free_port, wait_for
from tests.multihost.network import Host, Network, Relay, namespaces_unavailable
from toolrun.config import Settings
from toolrun.embedded import RedisServer, terminate

WORKER_TTL_S = 3
LEVELS = ("read_only", "execute")


@dataclass
class Cluster:
    root: Path
    network: Network
    redis_server: RedisServer
    schema: str
    api_port: int = field(default_factory=free_port)
    relays: list[Relay] = field(default_factory=list)
    relay_ports: tuple[int, int] = (0, 0)  # Redis's and PostgreSQL's on each host's link
    core_processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    token: str = ""

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def host(self, name: str) -> Host:
        [found] = [host for host in self.network.hosts if host.name == name]
        return found

    def database_url(self, address: str, port: int) -> str:
        base = POSTGRES.replace("127.0.0.1:5432", f"{address}:{port}")
        return f"{base}?options=-csearch_path%3D{self.schema}"

    def env(self, host: Host | None) -> dict[str, str]:
        """A process's environment on `host` (None: the core), reaching Redis and the
        database through that host's link."""
        address = "127.0.0.1" if host is None else host.core_address
        redis_port = self.redis_server.port if host is None else self.relay_ports[0]
        pg = (address, 5432) if host is None else (address, self.relay_ports[1])
        python_path = os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")]))
        return {
            **os.environ,
            "PYTHONPATH": python_path,
            "TOOLRUN_REDIS_URL": f"redis://:{self.redis_server.password}@{address}:{redis_port}/0",
            "TOOLRUN_DATABASE_URL": self.database_url(*pg),
            "TOOLRUN_WORKSPACE": str(self.workspace),
            "TOOLRUN_HOME": str(self.root / f"home-{'core' if host is None else host.name}"),
            "TOOLRUN_MACHINE_ID": "core" if host is None else host.name,
            "TOOLRUN_TOOL_MODULES": '["toolrun_testtools"]',
            "TOOLRUN_WORKER_TTL_S": str(WORKER_TTL_S),
            "TOOLRUN_AUTO_APPROVE": "true",
            "TOOLRUN_KILL_GRACE_S": "0.5",
        }

    def start_worker(self, host: Host, level: str) -> None:
        log = self.logs / f"{host.name}-{level}.log"
        argv = [sys.executable, "-m", "toolrun", "worker", f"--level={level}", "--concurrency=2"]
        host.start(argv, self.env(host), log)
        wait_for(lambda: b"ready." in log.read_bytes(), 60, f"the {level} worker on {host.name}")

    def start_scheduler(self, host: Host) -> None:
        argv = [sys.executable, "-m", "toolrun", "scheduler"]
        host.start(argv, self.env(host), self.logs / f"{host.name}-scheduler.log")

    def api(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why = namespaces_unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs test hosts (network namespaces): {why}")
        pytest.skip(why)
    with postgres_schema("mh") as schema:
        yield from _started(tmp_path_factory.mktemp("multihost"), schema)


def _started(root: Path, schema: str) -> Iterator[Cluster]:
    network = Network()
    cluster = Cluster(root, network, RedisServer(root / "redis"), schema)
    cluster.workspace.mkdir()
    cluster.logs.mkdir()
    try:
        cluster.redis_server.start()
        cluster.relay_ports = redis_port, pg_port = free_port(), free_port()
        for name in ("wa", "wb", "sc"):
            host = network.add(name)
            cluster.relays += [
                Relay(host.core_address, redis_port, ("127.0.0.1", cluster.redis_server.port)),
                Relay(host.core_address, pg_port, ("127.0.0.1", 5432)),
            ]
        settings = Settings(
            database_url=cluster.database_url("127.0.0.1", 5432), home=root / "home-core"
        )
        cluster.token = admin_token(settings)
        core_env = cluster.env(None)
        with (cluster.logs / "api.log").open("ab") as log:
            cluster.core_processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "toolrun", "api", f"--port={cluster.api_port}"],
                    env=core_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        wait_for(lambda: httpx.get(f"{cluster.base_url}/healthz").status_code == 200, 60, "the API")
        for name in ("wa", "wb"):
            for level in LEVELS:
                cluster.start_worker(cluster.host(name), level)
        cluster.start_scheduler(cluster.host("sc"))
        yield cluster
    finally:
        network.close()
        terminate(cluster.core_processes, 10)
        for relay in cluster.relays:
            relay.close()
        cluster.redis_server.stop()


def redis_client(cluster: Cluster) -> redis.Redis:
    return redis.Redis(port=cluster.redis_server.port, password=cluster.redis_server.password)

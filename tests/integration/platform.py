"""Real platform processes for integration tests: API and workers, each its own process."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.embedded import terminate
from toolrun.embedded.admin_token import ensure_admin_token
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

SUPPORT = Path(__file__).parent / "support"
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 15.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def admin_token(settings: Settings) -> str:
    """The admin token of the platform of `settings` (made now, as `toolrun up` does)."""
    engine = open_database(settings.database)
    try:
        ensure_admin_token(AgentStore(engine), settings.admin_token_path)
    finally:
        engine.dispose()
    return settings.admin_token_path.read_text().strip()


def other_database(url: str, offset: int = 1) -> str:
    """The same Redis, another database: a platform whose queues are its own."""
    base, _, db = url.rpartition("/")
    return f"{base}/{(int(db or 0) + offset) % 16}"


def wait_for(predicate: object, timeout_s: float, what: str) -> None:
    """Poll `predicate` until true; fail with `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if callable(predicate) and predicate():
                return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


@dataclass
class Platform:
    """An API process and one worker process per level, sharing one Redis and workspace."""

    redis_url: str
    workspace: Path
    logs: Path
    extra_env: Mapping[str, str] = field(default_factory=dict)
    levels: tuple[PermissionLevel, ...] = tuple(PermissionLevel)
    scheduler: bool = False  # also run the DAG scheduler
    delegation: bool = False  # also run a delegation worker (the task tool)
    api_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    token: str = ""  # the admin token, set by start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def env(self) -> dict[str, str]:
        python_path = os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")]))
        return {
            **os.environ,
            "PYTHONPATH": python_path,
            "TOOLRUN_REDIS_URL": self.redis_url,
            "TOOLRUN_WORKSPACE": str(self.workspace),
            "TOOLRUN_TOOL_MODULES": '["toolrun_testtools"]',
            "TOOLRUN_KILL_GRACE_S": "0.5",
            "TOOLRUN_HOME": str(self.logs / "home"),
            **self.extra_env,
        }

    def start_process(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> None:
        """`toolrun ARGS` as the platform's process `name`; `env` adds to its environment."""
        self.logs.mkdir(parents=True, exist_ok=True)
        with (self.logs / f"{name}.log").open("ab") as log:
            self.processes[name] = subprocess.Popen(
                [sys.executable, "-m", "toolrun", *args],
                env={**self.env, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def settings(self) -> Settings:
        """What the platform's processes read (for the database and the token file)."""
        return Settings(home=self.logs / "home", database_url=self.env.get("TOOLRUN_DATABASE_URL"))

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def agent(
        self,
        name: str,
        ceiling: PermissionLevel,
        role: Role = Role.AGENT,
        **options: Any,
    ) -> str:
        """A new agent profile in the platform's database; returns its token."""
        engine = open_database(self.settings.database)
        try:
            _profile, token = AgentStore(engine).create(name, ceiling=ceiling, role=role, **options)
        finally:
            engine.dispose()
        return token

    def cli(
        self, *args: str, stdin: str = "", home: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`toolrun ARGS` against this platform, finding the admin token in `home` (default:
        the platform's) as on a machine that ran `toolrun up`."""
        env = {
            **os.environ,
            "TOOLRUN_API": self.base_url,
            "TOOLRUN_HOME": str(home or self.settings.home),
        }
        return subprocess.run(
            [sys.executable, "-m", "toolrun", *args],
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def start(self) -> None:
        self.token = admin_token(self.settings)
        for level in self.levels:
            self.start_worker(level)
        self.start_process("api", "api", f"--port={self.api_port}")
        if self.scheduler:
            self.start_scheduler()
        if self.delegation:
            self.start_process("worker-delegation", "worker", "--delegation", "--concurrency=2")
        wait_for(self.healthy, READY_TIMEOUT_S, "the API to become healthy")
        roles = [*self.levels, *(["delegation"] if self.delegation else [])]
        for role in roles:
            wait_for(lambda r=role: self.worker_ready(r), READY_TIMEOUT_S, f"{role} worker")

    def start_worker(self, level: PermissionLevel, concurrency: int = 2) -> None:
        self.start_process(
            f"worker-{level}", "worker", f"--level={level}", f"--concurrency={concurrency}"
        )

    def start_scheduler(self) -> None:
        self.start_process("scheduler", "scheduler")

    def worker_ready(self, role: str) -> bool:
        """True once the worker of a level (or "delegation") has logged that it is ready."""
        return b"ready." in (self.logs / f"worker-{role}.log").read_bytes()

    def healthy(self) -> bool:
        return httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200

    def pool_pids(self, level: PermissionLevel) -> list[int]:
        """Pids of the pool processes of a level's worker."""
        main = self.processes[f"worker-{level}"].pid
        children = Path(f"/proc/{main}/task/{main}/children").read_text().split()
        return [int(pid) for pid in children]

    def stop(self) -> None:
        terminate(list(self.processes.values()), STOP_GRACE_S)


@contextlib.contextmanager
def running(platform: Platform) -> Iterator[Platform]:
    try:
        platform.start()
        yield platform
    finally:
        platform.stop()


@contextlib.contextmanager
def apart(redis_url: str, offset: int, root: Path, **options: Any) -> Iterator[Platform]:
    """A platform of its own, started: its Redis database (`other_database` at `offset`,
    flushed before and after), workspace and logs under `root`; `options` as Platform's."""
    url = other_database(redis_url, offset)
    redis.Redis.from_url(url).flushdb()
    (root / "workspace").mkdir()
    try:
        with running(Platform(url, root / "workspace", root / "logs", **options)) as started:
            yield started
    finally:
        redis.Redis.from_url(url).flushdb()


def record_keys(client: redis.Redis) -> set[bytes]:
    return set(client.scan_iter("toolrun:call:*"))

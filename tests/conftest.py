"""Shared fixtures: a real workspace on disk, a context, and a one-line way to call a tool."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
import sqlalchemy
from sqlalchemy.exc import OperationalError

from toolrun import local
from toolrun.config import Settings
from toolrun.database import open_database
from toolrun.homes import state_directory
from toolrun.permissions.agents import AgentStore
from toolrun.permissions.approvals import Approver, AutoApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.sandbox.proxy import Refusal
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult

CallTool = Callable[..., ToolResult]


@pytest.fixture(scope="session", autouse=True)
def state_of_its_own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Platform homes that tests make (their own and their subprocesses') go under a
    temporary XDG_STATE_HOME; the user's real one gains nothing."""
    real = state_directory() / "toolrun"
    before = set(real.iterdir()) if real.is_dir() else set()
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    yield
    left = (set(real.iterdir()) if real.is_dir() else set()) - before
    assert not left, f"tests left platform homes in {real}: {sorted(map(str, left))}"


# The built-in tools every registry starts with, by name.
BUILTINS = [
    "bash",
    "edit",
    "git_add",
    "git_blame",
    "git_branch_create",
    "git_branches",
    "git_clean",
    "git_commit",
    "git_diff",
    "git_log",
    "git_push",
    "git_reset",
    "git_show",
    "git_stash",
    "git_status",
    "git_switch",
    "glob",
    "grep",
    "http_fetch",
    "lsp",
    "read",
    "search",
    "task",
    "terminal",
    "write",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory, with a sibling `outside` directory for escape tests."""
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("top secret\n")
    return root


@pytest.fixture
def settings(workspace: Path) -> Settings:
    # The allowlist has its own tests; here bash may run any program (policy still applies).
    return Settings(workspace=workspace, kill_grace_s=0.5, command_allowlist=None)


@pytest.fixture
def approver() -> Approver:
    return AutoApprover()


@pytest.fixture
def ctx(settings: Settings, approver: Approver) -> ToolContext:
    return ToolContext.create(settings, approver=approver)


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry.with_builtins()


@pytest.fixture
def call_tool(registry: ToolRegistry, ctx: ToolContext) -> CallTool:
    """`call_tool("read", file_path="a.txt")` runs the call in-process and returns the result."""
    executor = Executor(registry)

    def run(name: str, /, **arguments: Any) -> ToolResult:
        return executor.execute(ToolCall(tool_name=name, arguments=arguments), ctx)

    return run


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sqlalchemy.engine.Engine]:
    """A migrated SQLite database of the test's own."""
    engine = open_database(f"sqlite:///{tmp_path / 'toolrun.db'}")
    yield engine
    engine.dispose()


def agent_token(
    settings: Settings,
    name: str = "admin",
    *,
    ceiling: PermissionLevel = PermissionLevel.ADMIN,
    role: Role = Role.ADMIN,
    **options: Any,
) -> str:
    """Create an agent in the settings' database and return its token."""
    engine = open_database(settings.database)
    try:
        _profile, token = AgentStore(engine).create(name, ceiling=ceiling, role=role, **options)
    finally:
        engine.dispose()
    return token


POSTGRES = os.environ.get(
    "TOOLRUN_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database: a SQLite file, or a schema of its own on the machine's PostgreSQL
    (skipped without one, except under CI)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'toolrun.db'}"
        return
    with postgres_schema("test") as schema:
        separator = "&" if "?" in POSTGRES else "?"
        yield f"{POSTGRES}{separator}options=-csearch_path%3D{schema}"


@contextmanager
def postgres_schema(prefix: str) -> Iterator[str]:
    """A schema of its own on the machine's PostgreSQL, dropped afterwards (the test is
    skipped without one, except under CI, where it fails)."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(POSTGRES)
    try:
        with admin.begin() as connection:
            connection.execute(sqlalchemy.text(f"CREATE SCHEMA {schema}"))
    except OperationalError as exc:
        admin.dispose()
        if os.environ.get("CI"):
            pytest.fail(f"CI needs PostgreSQL at {POSTGRES}: {exc}")
        pytest.skip(f"no PostgreSQL at {POSTGRES}")
    try:
        yield schema
    finally:
        with admin.begin() as connection:
            connection.execute(sqlalchemy.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


UNIT_REDIS_URL = os.environ.get("TOOLRUN_TEST_UNIT_REDIS_URL", "redis://127.0.0.1:6379/12")


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A real Redis (database 12), flushed around each test; locally a test skips when
    there is none, in CI (CI=true) it fails."""
    client = redis.Redis.from_url(UNIT_REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        if os.environ.get("CI"):
            pytest.fail(f"CI needs Redis at {UNIT_REDIS_URL}: {exc}")
        pytest.skip(f"no Redis at {UNIT_REDIS_URL}")
    client.flushdb()
    try:
        yield UNIT_REDIS_URL
    finally:
        client.flushdb()
        client.close()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def jails(monkeypatch: pytest.MonkeyPatch) -> list[Settings]:
    """The settings of each jail set-up run_local enters; each yields no jail (the jail's
    own tests are in tests/sandbox/test_confinement.py)."""
    entered: list[Settings] = []

    @contextmanager
    def recorded(settings: Settings, on_refused: Callable[[Refusal], None]) -> Iterator[None]:
        entered.append(settings)
        yield None

    monkeypatch.setattr(local, "call_confinement", recorded)
    return entered

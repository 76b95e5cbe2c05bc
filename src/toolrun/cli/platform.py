"""`toolrun up`, `api`, `worker`, `flower`: the platform's processes.

Each command imports the services it starts (Celery, Redis, uvicorn, the database): the
other commands, and `toolrun --help`, import this module too."""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit, urlunsplit

import typer

from toolrun.cli._console import err, load_registry, load_settings, out, usage_error
from toolrun.errors import ToolrunError
from toolrun.permissions.levels import DELEGATION_QUEUE, DELEGATION_ROLE, PermissionLevel

if TYPE_CHECKING:
    from celery import Celery

    from toolrun.config import Settings
    from toolrun.embedded import RedisServer, Supervisor
    from toolrun.sandbox.confinement import Enforcement

_READY_TIMEOUT_S = 60.0
_ROLES = {*(level.value for level in PermissionLevel), DELEGATION_ROLE}


def _platform_settings() -> Settings:
    settings = load_settings(locate=False)  # `toolrun up` sets the workspace and home
    if settings.redis_url is None:
        raise usage_error("TOOLRUN_REDIS_URL is not set; `toolrun up` starts everything for you")
    _check_home(settings)
    return settings


def _check_home(settings: Settings) -> None:
    """Refuse a home inside the workspace; make the home its owner's only (or repair it)."""
    from toolrun.embedded.home import secure_home

    problem = settings.home_problem()
    if problem is not None:
        raise usage_error(problem)
    secure_home(settings.platform_home)


def api(
    host: Annotated[
        str | None, typer.Option(help="Bind address (default TOOLRUN_API_HOST).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default TOOLRUN_API_PORT).")] = None,
    processes: Annotated[
        int, typer.Option(min=1, help="Server processes sharing the port (CPU-bound API).")
    ] = 1,
) -> None:
    """Serve the HTTP API (needs TOOLRUN_REDIS_URL)."""
    import uvicorn

    settings = _platform_settings()
    load_registry(settings)  # a bad tool module fails here, as a usage error, not in uvicorn
    uvicorn.run(
        "toolrun.api.app:create_app_from_environment",
        factory=True,
        workers=processes,
        host=host or settings.api_host,
        port=settings.api_port if port is None else port,
        log_level="warning",
        access_log=False,
    )


def worker(
    level: Annotated[
        PermissionLevel | None, typer.Option(help="The only queue this worker consumes.")
    ] = None,
    delegation: Annotated[
        bool, typer.Option("--delegation", help="Consume the Task tool's queue instead.")
    ] = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Pool processes.")] = 1,
    loglevel: Annotated[
        str, typer.Option(help="Celery log level (INFO logs every task).")
    ] = "INFO",
) -> None:
    """Run a Celery worker for one permission level, or for the Task tool's delegations
    (needs TOOLRUN_REDIS_URL)."""
    if (level is None) == (not delegation):
        raise usage_error("give exactly one of --level LEVEL and --delegation")
    import redis

    from toolrun.calls.outbox import HistoryOutbox
    from toolrun.database import open_database, prepare_to_fork
    from toolrun.history import HistoryStore
    from toolrun.monitoring import tracing
    from toolrun.plugins.registry import PluginRegistry, plugin_cache
    from toolrun.workers.app import create_celery_app, longest_time_limit
    from toolrun.workers.broker import wait_for_broker
    from toolrun.workers.isolation import report_isolation, withdraw_isolation_report
    from toolrun.workers.presence import Presence
    from toolrun.workers.reaper import Reaper
    from toolrun.workers.runtime import WorkerRuntime
    from toolrun.workers.tasks import register_tasks

    settings = _platform_settings()
    isolation = _isolation(settings)
    registry = load_registry(settings)
    prepare_to_fork(settings.database)  # before its threads start and its pool forks
    with_plugins = PluginRegistry(registry, settings.database, plugin_cache(settings))
    role = DELEGATION_ROLE if level is None else level.value
    name = f"{role}@{socket.gethostname()}/{os.getpid()}"  # replacements overlap by name
    app = create_celery_app(
        settings, longest_time_limit_s=longest_time_limit(registry, settings), worker=name
    )
    # A delegation worker runs the Task tool (read_only); its sub-agents' calls go to the
    # workers of their levels.
    runtime = WorkerRuntime(
        settings,
        level or PermissionLevel.READ_ONLY,
        with_plugins,
        delegates=level is None,
        name=name,
    )
    register_tasks(app, runtime)
    client = redis.Redis.from_url(str(settings.redis_url), socket_timeout=5)
    wait_for_broker(client)
    report_isolation(client, name, isolation)
    queues, machine_key = _queues_of(level, settings)
    presence = Presence(
        client,
        name,
        ttl_s=settings.worker_ttl_s,
        machine_key=machine_key,
        queue=queues[0],
        slots=concurrency,
    )
    presence.start()
    reaper = Reaper.of(runtime, app, client)
    reaper.publisher.pump(queues[0])  # calls that waited for a worker of this queue
    app.steps["consumer"].add(reaper.consumer_step())
    reaper.start()
    # Its own database engine (pool processes, forked at any time, use the runtime's),
    # opened when it first writes: a worker starts while the database is away.
    outbox = HistoryOutbox(client, lambda: HistoryStore(open_database(settings.database)), name)
    tracing.setup(settings, "toolrun-worker")  # the drainer's spans; pool processes their own
    outbox.start()
    try:
        _run_worker(app, role, queues, concurrency, loglevel)
    finally:
        outbox.stop()
        tracing.shutdown()
        reaper.stop()
        presence.stop()
        with contextlib.suppress(redis.RedisError):
            withdraw_isolation_report(client, name)
        client.close()


def _queues_of(level: PermissionLevel | None, settings: Settings) -> tuple[list[str], str | None]:
    """A worker's queues — its level's, and the one of its level on this machine; or the
    delegations' — and the key that says its level has a worker on this machine."""
    from toolrun.calls import keys

    if level is None:
        return [DELEGATION_QUEUE], None
    queues = [level.queue_name, level.machine_queue(settings.machine_id)]
    return queues, keys.machine(settings.machine_id, level.value)


def _isolation(settings: Settings) -> Enforcement:
    """What this worker enforces on its tools' processes, said on stderr.

    Raises:
        typer.Exit: a sandbox path is invalid, or isolation is required and unavailable.
    """
    from toolrun.sandbox.confinement import enforcement

    try:
        state = enforcement(settings)
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    for layer, value in (("filesystem", state.filesystem), ("network", state.network)):
        colour = "green" if value.startswith("isolated") else "yellow"
        err.print(f"[{colour}]{layer}:[/] {value}", highlight=False, soft_wrap=True)
    if settings.fs_isolation == "required" and not state.filesystem_isolated:
        raise usage_error(
            "TOOLRUN_FS_ISOLATION=required and this worker cannot isolate its tools' "
            f"processes ({state.filesystem}); fix that, or set it to auto"
        )
    return state


def _run_worker(app: Celery, role: str, queues: list[str], concurrency: int, loglevel: str) -> None:
    app.worker_main(
        [
            "worker",
            f"--queues={','.join(queues)}",
            f"--concurrency={concurrency}",
            "--pool=prefork",
            # A call goes to an idle pool process only, never queued behind a long call
            # in a busy one while another process is idle.
            "--optimization=fair",
            f"--hostname={role}@%h",
            f"--loglevel={loglevel}",
            "--without-gossip",
            "--without-mingle",
        ]
    )


def scheduler() -> None:
    """Run the DAG scheduler (needs TOOLRUN_REDIS_URL); one per platform."""
    from toolrun.monitoring import configure_logging
    from toolrun.scheduler.service import serve

    settings = _platform_settings()
    registry = load_registry(settings)
    configure_logging(settings)
    serve(settings, registry)


def flower(
    port: Annotated[int | None, typer.Option(help="Port (default TOOLRUN_FLOWER_PORT).")] = None,
    address: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
) -> None:
    """Run Flower against the platform's broker (needs TOOLRUN_REDIS_URL)."""
    from toolrun.workers.app import create_celery_app

    settings = _platform_settings()
    app = create_celery_app(settings)
    chosen = settings.flower_port if port is None else port
    # The workers send their task events themselves (`workers.task_events`): Flower must
    # not turn Celery's on in them, which would send each one twice.
    app.start(["flower", f"--address={address}", f"--port={chosen}", "--enable_events=False"])


def up(
    host: Annotated[str | None, typer.Option(help="API bind address.")] = None,
    port: Annotated[int | None, typer.Option(help="API port.")] = None,
    workspace: Annotated[
        Path | None, typer.Option(help="Root that tools are confined to (default: cwd).")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            min=1, help="Pool processes of every worker (default: from the cores and the tools)."
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", help="Every process's output here, not in log files in the home."
        ),
    ] = False,
) -> None:
    """Start the whole platform on this machine: Redis, API, one worker per level, the DAG
    scheduler, Flower."""
    from toolrun.cli._locate import announce, withdraw
    from toolrun.embedded import Supervisor
    from toolrun.embedded.supervisor import LOGS, STATUS_FILE

    given = load_settings(locate=False)  # the platform serves where it is started
    space = (workspace or given.workspace).resolve()
    if not space.is_dir():
        raise usage_error(f"workspace is not a directory: {space}")
    settings = given.model_copy(update={"workspace": space})
    _claim_home(settings)
    isolation = _isolation(settings)
    home = settings.platform_home
    api_host, api_port, flower_port = _ports(settings, host, port)
    pools = _pool_sizes(settings, concurrency)
    token_path, created = _admin_token(settings)
    redis_server = None if settings.redis_url else _own_redis(home)
    redis_url = redis_server.url if redis_server else str(settings.redis_url)
    shown_url = redis_server.display_url if redis_server else _redacted(redis_url)
    env = {
        **os.environ,
        "TOOLRUN_REDIS_URL": redis_url,
        "TOOLRUN_WORKSPACE": str(space),
        "TOOLRUN_HOME": str(home),
    }
    supervisor = Supervisor(
        env,
        report=lambda line: err.print(f"[yellow]{line}[/]", highlight=False),
        status_path=home / STATUS_FILE,
        log_dir=None if verbose else home / LOGS,
    )
    # Explicit for SIGINT too: a shell starts background jobs with SIGINT ignored.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if redis_server is not None:
            _start_redis(supervisor, redis_server)
        _start_platform(supervisor, api_host, api_port, flower_port, pools)
        base = f"http://{api_host}:{api_port}"
        _wait_until_ready(base, redis_url, supervisor)
        _announce(space, base, flower_port, shown_url, token_path, created)
        _announce_processes(_shown_pools(pools, concurrency), isolation, supervisor.log_dir)
        out.print(f"  Sharing  {_shown_sharing(settings)}", highlight=False, soft_wrap=True)
        _paste_lines(base, token_path)
        announce(home, base)  # the CLI finds this API from the workspace and below
        out.print("Ctrl-C stops everything.")
        ended = supervisor.watch()  # restarts what dies; returns on a crash loop
        err.print(f"[red]{ended}[/]")
        code = 1
    except ToolrunError as exc:
        err.print(f"[red]error:[/] {exc}")
        code = 1
    except KeyboardInterrupt:
        code = 0
    finally:
        # A second Ctrl-C must not cut the shutdown short and orphan the children.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        withdraw(home)
        _stop_platform(supervisor, settings)
    raise typer.Exit(code)


def _stop_platform(supervisor: Supervisor, settings: Settings) -> None:
    out.print("stopping…")
    supervisor.stop()  # newest first; the platform's own Redis once the others have exited
    _end_terminal_sessions(settings)
    out.print("toolrun stopped.")


def _own_redis(home: Path) -> RedisServer:
    """The platform's own Redis (not started yet), its files in the home."""
    from toolrun.embedded import RedisServer

    return RedisServer(home / "redis")


def _claim_home(settings: Settings) -> None:
    """Check and secure the home, and hold it for this platform's life.

    Raises:
        typer.Exit: another `toolrun up` runs on this home.
    """
    from toolrun.cli._locate import hold

    _check_home(settings)
    if not hold(settings.platform_home):
        raise usage_error(
            f"a platform already runs for {settings.workspace} (its home "
            f"{settings.platform_home} is in use); stop it first, or start this one in "
            "another workspace"
        )


def _start_redis(supervisor: Supervisor, server: RedisServer) -> None:
    """The platform's own Redis, a supervised child like the others (one that dies is
    started again on its port, with its password and its append-only file), answering
    before anything that needs it starts.

    Raises:
        ToolrunError: it did not answer in time (its log named).
    """
    from toolrun.embedded.redis_server import UMASK

    # Stopped last: the others write their last results and history rows into it.
    child = supervisor.start("redis", server.command(), umask=UMASK, stop_last=True)
    try:
        server.wait_ready(lambda: child.process is not None and child.process.poll() is None)
    except ToolrunError as exc:
        log = supervisor.log_of(child)
        raise ToolrunError(str(exc) if log is None else f"{exc}; its output: {log}") from exc


def _end_terminal_sessions(settings: Settings) -> None:
    """Stop the terminal host: it outlives the workers that started it."""
    from toolrun.terminal.client import HostClient
    from toolrun.tools.builtin.terminal import HOST_IDLE_S, host_socket

    HostClient(host_socket(settings), idle_s=HOST_IDLE_S).stop()


def _announce(
    space: Path, base: str, flower_port: int, redis: str, token_path: Path, created: bool
) -> None:
    out.print(f"toolrun is up — workspace {space}")
    out.print(f"  API      {base}")
    out.print(f"  API docs {base}/docs")
    out.print(f"  Flower   http://127.0.0.1:{flower_port}")
    out.print(f"  Redis    {redis}", soft_wrap=True)
    state = "created now" if created else "kept from an earlier start"
    out.print(
        f"  Token    {token_path} (admin; {state}; the CLI reads it from there)",
        soft_wrap=True,  # a path cut in two cannot be copied
    )
    out.print(f"  Approve  {base}/ui/approvals (it asks for the token)")


def _announce_processes(pools: str, isolation: Enforcement, logs: Path | None) -> None:
    out.print(f"  Workers  {pools}", highlight=False, soft_wrap=True)
    if logs is not None:
        out.print(
            f"  Logs     {logs}/ (one file a process: `toolrun logs [-f]`; "
            "`toolrun up --verbose` shows them here)",
            highlight=False,
            soft_wrap=True,
        )
    out.print(
        f"  Tools    filesystem {isolation.filesystem}; network {isolation.network}",
        highlight=False,
        soft_wrap=True,
    )


def _paste_lines(base: str, token_path: Path) -> None:
    """Lines to paste into another shell: the token stays in its file, off this console."""
    out.print("In another terminal:")
    quoted = shlex.quote(str(token_path))
    out.print(
        f"  export TOOLRUN_API={base} TOOLRUN_TOKEN=$(cat {quoted})",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        '  echo "$TOOLRUN_API/ui/approvals#token=$TOOLRUN_TOKEN"   # the approval page, signed in',
        highlight=False,
        soft_wrap=True,
    )


def _admin_token(settings: Settings) -> tuple[Path, bool]:
    """The admin token's file, and whether it was created now."""
    from sqlalchemy.exc import SQLAlchemyError

    from toolrun.database import open_database
    from toolrun.embedded.admin_token import ensure_admin_token
    from toolrun.permissions.agents import AgentStore

    path = settings.admin_token_path
    try:
        return path, ensure_admin_token(AgentStore(open_database(settings.database)), path)
    except SQLAlchemyError as exc:
        raise usage_error(f"cannot open the database {settings.database}: {exc}") from exc


def _pool_sizes(settings: Settings, concurrency: int | None) -> dict[str, int]:
    """Pool processes per worker role: `concurrency` for every one, or the defaults that
    `embedded.pools` derives from this machine and the tools of each level."""
    if concurrency is not None:
        return dict.fromkeys(_ROLES, concurrency)
    from toolrun.embedded.pools import Machine, pool_sizes

    return pool_sizes(load_registry(settings).list(), Machine.here())


def _shown_pools(pools: dict[str, int], concurrency: int | None) -> str:
    roles = [*(level.value for level in PermissionLevel), DELEGATION_ROLE]
    sizes = " · ".join(f"{role} {pools[role]}" for role in roles)
    source = "--concurrency" if concurrency is not None else "from the cores and tools"
    return f"{sizes} pool processes ({source}; --concurrency N sets all)"


def _shown_sharing(settings: Settings) -> str:
    """How agents share the levels: in turn, within their quotas, under each queue's bound."""

    def limit(value: float, unit: str) -> str:
        return f"{value:g} {unit}" if value else f"no limit on {unit}"

    rate = limit(settings.agent_rate_per_s, "calls/s")
    waiting = limit(settings.agent_max_queued, "calls waiting")
    bound = (
        f"503 past {settings.queue_bound} calls waiting on a level"
        if settings.queue_bound
        else "no bound on a level's queue"
    )
    return (
        f"agents served in turn; each agent by default: {waiting}, {rate} (TOOLRUN_AGENT_*, "
        f"`toolrun agents quota`); {bound} (TOOLRUN_QUEUE_BOUND)"
    )


def _start_platform(
    supervisor: Supervisor, host: str, port: int, flower_port: int, pools: dict[str, int]
) -> None:
    # -P: the working directory (the workspace, which tools write) is not on sys.path.
    me = [sys.executable, "-P", "-m", "toolrun"]
    supervisor.start("api", [*me, "api", f"--host={host}", f"--port={port}"])
    for level in PermissionLevel:
        worker = [*me, "worker", f"--level={level}", f"--concurrency={pools[level.value]}"]
        supervisor.start(f"worker {level}", worker)
    delegates = [*me, "worker", "--delegation", f"--concurrency={pools[DELEGATION_ROLE]}"]
    supervisor.start(f"worker {DELEGATION_ROLE}", delegates)
    supervisor.start("scheduler", [*me, "scheduler"])
    # A monitoring page: if it cannot run (its port taken), the platform goes on without it.
    supervisor.start("flower", [*me, "flower", f"--port={flower_port}"], optional=True)


def _redacted(url: str) -> str:
    """`url` with any password replaced by ***."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def _ports(settings: Settings, host: str | None, port: int | None) -> tuple[str, int, int]:
    """The API's address and Flower's port, checked before anything starts.

    Raises:
        typer.Exit: the API's port is taken (a usage error naming the option to change).
    """
    api_host = host or settings.api_host
    api_port = settings.api_port if port is None else port
    if not _port_free(api_host, api_port):
        raise usage_error(
            f"port {api_port} on {api_host} is taken (another `toolrun up`?); "
            "choose another with --port N or TOOLRUN_API_PORT"
        )
    return api_host, api_port, _flower_port(settings.flower_port)


def _port_free(host: str, port: int) -> bool:
    """True when a server could listen on `host`:`port` now."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _flower_port(wanted: int) -> int:
    """`wanted`, or a free port when it is taken (Flower is a monitoring page: a second
    platform on this machine must not fail for it); the choice is printed."""
    if _port_free("127.0.0.1", wanted):
        return wanted
    from toolrun.embedded.redis_server import free_port

    chosen = free_port()
    err.print(f"[yellow]Flower's port {wanted} is taken; it uses {chosen}[/]", highlight=False)
    return chosen


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _wait_until_ready(base: str, redis_url: str, supervisor: Supervisor) -> None:
    """Until the API is healthy and a worker of every level, and one for delegations,
    answers a ping.

    Raises:
        ToolrunError: a child exited, or the platform was not ready in time.
    """
    from toolrun.config import Settings
    from toolrun.workers.app import create_celery_app

    deadline = time.monotonic() + _READY_TIMEOUT_S
    celery = create_celery_app(Settings(redis_url=redis_url))
    try:
        while time.monotonic() < deadline:
            if _api_healthy(base) and _roles_answering(celery) >= _ROLES:
                return
            ended = supervisor.exited()  # a required child: nothing restarts before ready
            if ended is not None:
                log = supervisor.log_of(ended)
                raise ToolrunError(
                    f"{ended.name} exited during start-up"
                    + ("" if log is None else f"; its output: {log}")
                )
            time.sleep(0.2)
    finally:
        celery.close()
    raise ToolrunError(f"the platform was not ready within {_READY_TIMEOUT_S:g} s")


def _api_healthy(base: str) -> bool:
    import httpx

    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200
    return False


def _roles_answering(celery: Celery) -> set[str]:
    """Levels (and delegation) with a worker that answers a ping (worker names are
    `role@host`)."""
    replies = celery.control.ping(timeout=0.5) or []
    return {name.partition("@")[0] for reply in replies for name in reply}

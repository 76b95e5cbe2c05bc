"""The jail's network: jailed commands reach only their own loopback and the allowlist
proxy; and the jail's launcher (for programs other libraries start)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
from tests.sandbox.test_proxy import BODY, NOT_ALLOWED, http_server
from tests.sandbox.test_runner import gone, sinks
from tests.sandbox.test_tracking import wait_until

from toolrun.config import Settings
from toolrun.sandbox.confinement import Confinement, base_confinement, enforcement
from toolrun.sandbox.jail import launch
from toolrun.sandbox.jail.forwarder import PORT
from toolrun.sandbox.jail.plan import JailPlan
from toolrun.sandbox.network import NetworkPolicy
from toolrun.sandbox.proxy import AllowlistProxy, Refusal
from toolrun.sandbox.runner import ProcessRunner
from toolrun.sandbox.tracking import CALL_MARKER_VAR
from toolrun.tools import ToolContext

PY = sys.executable
CURL = "/usr/bin/curl"
CONNECT = (
    "import socket, sys\n"
    "socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close()\n"
    "print('connected')"
)
ECHO_ON_LOOPBACK = (
    "import socket\n"
    "with socket.create_server(('127.0.0.1', 0)) as server:\n"
    "    with socket.create_connection(server.getsockname(), timeout=5) as client:\n"
    "        peer, _ = server.accept()\n"
    "        with peer:\n"
    "            client.sendall(b'ping')\n"
    "            print(peer.recv(4).decode())"
)


def require(problem: str | None) -> None:
    """Skip when `problem` says this host lacks something; in CI that is a failure."""
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs namespaces: {problem}")
        pytest.skip(problem)


def starved() -> list[str] | None:
    """A command prefix under which no namespace can be made (every quota 0 in a user
    namespace of its own: unshare fails with ENOSPC); None where that cannot be set up."""
    quota = (
        "echo 0 > /proc/sys/user/max_user_namespaces && "
        "echo 0 > /proc/sys/user/max_net_namespaces && "
        'echo 0 > /proc/sys/user/max_mnt_namespaces && exec "$@"'
    )
    wrapper = ["unshare", "--user", "--map-root-user", "/bin/sh", "-c", quota, "sh"]
    try:
        check = subprocess.run([*wrapper, "true"], capture_output=True, timeout=20, check=False)
    except FileNotFoundError:
        return None
    return wrapper if check.returncode == 0 else None


def launched(plan: JailPlan, command: list[str]) -> tuple[list[str], dict[str, str]]:
    """The launcher's argv for `command`, and this process's environment with the plan."""
    argv, carried = launch.command(plan, command)
    return argv, {**os.environ, **carried}


def jail_of(settings: Settings, proxy_socket: str | None = None) -> Confinement:
    """The jail the settings give, skipping (failing in CI) where the host has none."""
    state = enforcement(settings)
    require(None if state.filesystem_isolated else state.filesystem)
    jail = base_confinement(settings, proxy_socket)
    assert jail is not None
    return jail


@pytest.fixture
def runner(settings: Settings) -> ProcessRunner:
    """Unjailed: the host's network."""
    return ToolContext.create(settings).runner


@pytest.fixture
def jailed(settings: Settings) -> ProcessRunner:
    return ToolContext.create(settings, jail=jail_of(settings)).runner


@pytest.fixture
def host_port() -> Iterator[int]:
    """A TCP listener on the host namespace's 127.0.0.1; its port."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener.getsockname()[1]


@contextlib.contextmanager
def proxied(settings: Settings, *allowed: str) -> Iterator[tuple[ProcessRunner, list[Refusal]]]:
    """A jailed runner whose only way out is a proxy allowing `allowed`."""
    jail_of(settings)
    refusals: list[Refusal] = []
    with AllowlistProxy(NetworkPolicy(allowed), refusals.append) as path:
        jail = jail_of(settings, str(path))
        yield ToolContext.create(settings, jail=jail).runner, refusals


def run(runner: ProcessRunner, argv: Sequence[str]) -> tuple[int | None, str, str]:
    """Exit code, stdout and stderr of `argv` run by `runner`."""
    out, err = sinks()
    ended = runner.run(argv, timeout_s=20, stdout=out, stderr=err)
    return ended.exit_code, out.data().decode(), err.data().decode()


@pytest.mark.parametrize(
    ("patterns", "host", "allowed"),
    [
        (("example.com",), "example.com", True),
        (("example.com",), "www.example.com", False),
        (("*.example.com",), "www.example.com", True),
        (("*.example.com",), "a.b.example.com", True),
        (("*.example.com",), "example.com", False),
        (("example.com", "*.example.com"), "example.com", True),
        (("Example.COM",), "eXample.com", True),
        (("example.com.",), "example.com", True),
        (("example.com",), "EXAMPLE.com.", True),
        (("example.com",), "example.com.evil.net", False),
        (("example.com",), "evilexample.com", False),
        (("*.example.com",), "evilexample.com", False),
        (("*.example.com",), "example.com.evil.net", False),
        (("127.0.0.1",), "127.0.0.1", True),
        (("127.0.0.1",), "127.0.0.2", False),
        (("127.0.0.1",), "127.1", False),
        (("127.0.0.1",), "2130706433", False),
        (("::1",), "::1", True),
        (("::1",), "[::1]", True),
        (("[::1]",), "0:0:0:0:0:0:0:1", True),
        (("*.example.com",), "127.0.0.1", False),
        (("example.com",), "", False),
        (("example.com",), "exa mple.com", False),
        ((), "example.com", False),
    ],
)
def test_policy_matches_hosts(patterns: tuple[str, ...], host: str, allowed: bool) -> None:
    assert NetworkPolicy(patterns).allows(host) is allowed


def test_policy_keeps_patterns_in_canonical_form() -> None:
    policy = NetworkPolicy(("Example.COM.", "*.Docs.Example.com", "[::0001]"))

    assert policy.allowed == ("example.com", "*.docs.example.com", "::1")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("", "is empty"),
        ("  ", "is empty"),
        ("exa mple.com", "contains whitespace"),
        ("http://example.com", "must be a host name, not a URL"),
        ("example.com/path", "must be a host name, not a URL"),
        ("*", "would allow every host"),
        ("*.", "would allow every host"),
        ("a*b.com", "'\\*' may only be a whole first label"),
        ("*example.com", "'\\*' may only be a whole first label"),
        ("www.*.example.com", "'\\*' may only be a whole first label"),
        ("example.com:443", "must not have a port"),
        ("exa_mple..com", "is not a host name or IP address"),
        ("-example.com", "is not a host name or IP address"),
        ("256.1.1.1", "is not a host name or IP address"),
        ("*.0.0.1", "is not a host name or IP address"),
    ],
)
def test_policy_rejects_junk_patterns(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NetworkPolicy(("example.com", pattern))


def test_this_host_can_isolate(settings: Settings) -> None:
    state = enforcement(settings)
    require(None if state.filesystem_isolated else state.filesystem)

    assert state.network == "isolated"
    assert state.filesystem == "isolated (namespaces+landlock+seccomp)"


def test_jailed_command_cannot_reach_the_host_loopback(
    runner: ProcessRunner, jailed: ProcessRunner, host_port: int
) -> None:
    argv = [PY, "-c", CONNECT, str(host_port)]

    assert run(runner, argv)[:2] == (0, "connected\n")
    code, out, err = run(jailed, argv)
    assert (code, out) == (1, "")
    assert "Connection refused" in err


def test_only_loopback_exists_in_the_jail(jailed: ProcessRunner) -> None:
    code, out, _ = run(jailed, ["/bin/cat", "/proc/net/dev"])

    assert code == 0
    assert [line.split(":")[0].strip() for line in out.splitlines()[2:]] == ["lo"]


def test_loopback_works_inside_the_jail(jailed: ProcessRunner) -> None:
    assert run(jailed, [PY, "-c", ECHO_ON_LOOPBACK]) == (0, "ping\n", "")


def test_jailed_command_does_not_inherit_ignored_signals(
    runner: ProcessRunner, jailed: ProcessRunner
) -> None:
    # Python ignores SIGPIPE and SIGXFSZ; a command exec'd from it would inherit that.
    argv = ["/bin/grep", "SigIgn", "/proc/self/status"]
    ignored = int(run(jailed, argv)[1].split()[1], 16)

    assert ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1)) == 0
    assert run(jailed, argv) == run(runner, argv)


def test_proxy_variables_point_at_the_forwarder(settings: Settings) -> None:
    with proxied(settings, "127.0.0.1") as (jailed, _):
        _, out, _ = run(jailed, ["/usr/bin/env"])

    seen = dict(line.split("=", 1) for line in out.splitlines())
    url = seen["http_proxy"]
    assert url == f"http://127.0.0.1:{PORT}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        assert seen[name] == url
    assert seen["NO_PROXY"] == seen["no_proxy"] == ""


def test_allowed_host_is_reached_through_the_proxy(settings: Settings) -> None:
    with http_server() as port, proxied(settings, "127.0.0.1") as (jailed, refusals):
        result = run(jailed, [CURL, "-sS", f"http://127.0.0.1:{port}/file"])

    assert result == (0, BODY.decode(), "")
    assert refusals == []


def test_host_outside_the_policy_gets_403(settings: Settings) -> None:
    with http_server() as port, proxied(settings, "example.com") as (jailed, refusals):
        result = run(jailed, [CURL, "-sS", "-w", "%{http_code}", f"http://127.0.0.1:{port}/file"])

    code, out, _ = result
    assert code == 0
    assert out.endswith(f"127.0.0.1:{port} refused: {NOT_ALLOWED}\n403")
    assert refusals == [Refusal("127.0.0.1", port, NOT_ALLOWED)]


def test_https_tunnel_to_a_host_outside_the_policy_is_refused(settings: Settings) -> None:
    with proxied(settings, "127.0.0.1") as (jailed, refusals):
        code, _, err = run(jailed, [CURL, "-sS", "https://evil.example/"])

    assert code != 0
    assert "403" in err
    assert refusals == [Refusal("evil.example", 443, NOT_ALLOWED)]


def test_forwarder_holds_no_inherited_descriptor_and_dies_with_the_jail(
    settings: Settings,
) -> None:
    inherited_read, inherited = os.pipe()
    try:
        with AllowlistProxy(NetworkPolicy(()), lambda _: None) as path:
            plan = jail_of(settings, str(path)).plan(cwd=settings.workspace, rlimits=())
            # A forwarder holding the output pipe would keep a reader of it waiting.
            argv, env = launched(plan, ["/bin/sleep", "60"])
            keeper = subprocess.Popen(
                argv,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(inherited,),
            )
            try:
                forwarder = _forwarder_of(keeper.pid)
                links = [os.readlink(f"/proc/{forwarder}/fd/{fd}") for fd in (0, 1, 2)]
                pipes = _pipes_of(forwarder)
            finally:
                keeper.kill()
                keeper.communicate()
    finally:
        os.close(inherited)
        os.close(inherited_read)

    assert links == ["/dev/null"] * 3
    assert pipes == []
    assert wait_until(lambda: gone(forwarder))


def _forwarder_of(keeper: int) -> int:
    """The keeper's child that has none of its own (the jail's init has the command)."""
    found: list[int] = []

    def both_started() -> bool:
        children = psutil.Process(keeper).children()
        found[:] = [child.pid for child in children if not child.children()]
        return len(children) == 2 and len(found) == 1

    assert wait_until(both_started)
    return found[0]


def _pipes_of(pid: int) -> list[str]:
    links = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):  # a relay thread just closed it
            links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return [link for link in links if link.startswith("pipe:")]


def test_no_process_of_a_jailed_call_remains(settings: Settings) -> None:
    script = f"sleep 60 & echo ${CALL_MARKER_VAR}"
    with proxied(settings, "127.0.0.1") as (jailed, _):
        code, out, _ = run(jailed, ["/bin/sh", "-c", script])
    marker = out.strip()

    assert code == 0
    assert marker
    assert [p.pid for p in psutil.process_iter() if _marker_of(p) == marker] == []


def _marker_of(process: psutil.Process) -> str | None:
    with contextlib.suppress(psutil.Error):
        return process.environ().get(CALL_MARKER_VAR)
    return None


def test_jail_that_cannot_be_made_never_runs_the_command(
    settings: Settings, tmp_path: Path
) -> None:
    wrapper = starved()
    require(None if wrapper else "cannot lower namespace quotas here")
    assert wrapper is not None
    ran = tmp_path / "ran"

    plan = jail_of(settings).plan(cwd=settings.workspace, rlimits=())
    argv, env = launched(plan, ["/bin/touch", str(ran)])
    done = subprocess.run(
        [*wrapper, *argv],
        env=env,
        capture_output=True,
        timeout=20,
        check=False,
    )

    assert done.returncode == 126
    assert done.stderr.decode().splitlines() == [
        "toolrun jail: cannot confine the command: unshare: No space left on device"
    ]
    assert not ran.exists()


def test_missing_program_exits_127(settings: Settings) -> None:
    plan = jail_of(settings).plan(cwd=settings.workspace, rlimits=())

    argv, env = launched(plan, ["/no/such/program"])
    done = subprocess.run(argv, env=env, capture_output=True, timeout=20, check=False)

    assert done.returncode == 127
    assert b"cannot run /no/such/program: No such file or directory" in done.stderr


def test_unprivileged_user_is_jailed_with_its_own_ids(settings: Settings) -> None:
    if os.geteuid() != 0 or not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("needs root to switch to an unprivileged user, and /usr/bin/python3")
    jail = jail_of(settings)
    shared = Path(tempfile.mkdtemp())
    try:
        shared.chmod(0o777)
        bare = replace(jail, workspace=shared, view=None, landlock=False)
        command = ["/bin/sh", "-c", f"cat /proc/net/dev; touch {shared}/made"]
        argv, env = launched(bare.plan(cwd=shared, rlimits=(), env={}), command)
        argv[0] = "/usr/bin/python3"  # the venv's interpreter may sit where nobody can read
        done = subprocess.run(
            argv,
            env=env,
            capture_output=True,
            timeout=20,
            check=False,
            user=65534,
            group=65534,
            extra_groups=[],
        )
        made = shared / "made"
        owner = (made.stat().st_uid, made.stat().st_gid) if made.exists() else None
    finally:
        shutil.rmtree(shared)

    assert done.returncode == 0, done.stderr
    assert [line.split(b":")[0].strip() for line in done.stdout.splitlines()[2:]] == [b"lo"]
    assert owner == (65534, 65534)

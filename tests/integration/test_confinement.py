"""Confinement on real workers, through the API, as an execute-level agent would try it:
plain calls that run at once (allowlisted programs, low risk), scripts it wrote itself, a
terminal session and an imported MCP stdio server. None of them returns what lies outside
the workspace; /healthz says how the workers isolate."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.platform import Platform, wait_for
from toolrun.permissions.levels import PermissionLevel

SECRET = "exfiltrate-me-7f3a"  # noqa: S105 - what must never come back
ECHO_SERVER = str(Path(__file__).parents[1] / "interop" / "echo_mcp_server.py")


@pytest.fixture(scope="module")
def outside(platform: Platform) -> Path:
    """A directory beside the platform's workspace holding a secret."""
    folder = platform.workspace.parent / "outside-confinement"
    folder.mkdir(exist_ok=True)
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


@pytest.fixture(scope="module")
def agent(platform: Platform) -> Iterator[httpx.Client]:
    token = platform.agent(f"attacker-{time.monotonic_ns()}", PermissionLevel.EXECUTE)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=platform.base_url, timeout=90, headers=headers) as client:
        yield client


def call(client: httpx.Client, tool: str, **arguments: Any) -> dict[str, Any]:
    body = {"tool_name": tool, "arguments": arguments}
    return dict(client.post("/v1/calls", params={"wait": 60}, json=body).json())


def seen(result: dict[str, Any]) -> str:
    return f"{result.get('output')} {result.get('error')}"


PLAIN_READS = [
    "cat {secret}",
    "head {secret}",
    "sort {secret}",
    "cut -c1-50 {secret}",
    "diff {secret} hello.txt",
    "grep -r exfiltrate {outside}",
    "wc -c < {secret} && cat < {secret}",
    "cat ../outside-confinement/secret.txt",
    "git diff --no-index hello.txt {secret}",
    "ls -la {outside}",
    "cat /etc/passwd",
]


@pytest.mark.parametrize("command", PLAIN_READS)
def test_plain_calls_read_nothing_outside_the_workspace(
    agent: httpx.Client, outside: Path, command: str
) -> None:
    result = call(
        agent, "bash", command=command.format(secret=outside / "secret.txt", outside=outside)
    )

    assert result["status"] in {"success", "error"}, result  # it ran: the jail answered
    assert SECRET not in seen(result)
    assert "secret.txt" not in str(result["output"]["stdout"])
    assert "daemon:" not in seen(result)  # the host's own /etc/passwd


@pytest.mark.parametrize(
    ("name", "script", "command"),
    [
        ("leak.py", "print(open({secret!r}).read())", "python3 leak.py"),
        ("leak.js", "console.log(require('fs').readFileSync({secret!r}, 'utf8'))", "node leak.js"),
        ("Makefile", "all:\n\tcat {secret}\n", "make"),
    ],
)
def test_scripts_the_agent_wrote_read_nothing_outside(
    agent: httpx.Client, outside: Path, name: str, script: str, command: str
) -> None:
    written = call(
        agent, "write", file_path=name, content=script.format(secret=str(outside / "secret.txt"))
    )
    result = call(agent, "bash", command=command)

    assert written["status"] == "success", written
    assert result["status"] == "error", result
    assert SECRET not in seen(result)


def test_the_platforms_secrets_are_out_of_reach(agent: httpx.Client, platform: Platform) -> None:
    script = (
        "import glob\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        print(open(path, 'rb').read())\n"
        "    except OSError as exc:\n"
        "        print(path, exc.strerror)\n"
    )
    call(agent, "write", file_path="environ.py", content=script)
    home = platform.settings.platform_home

    environ = call(agent, "bash", command="python3 environ.py")
    token = call(agent, "bash", command=f"cat {home}/admin.token")

    assert environ["status"] == "success", environ
    assert platform.redis_url not in seen(environ)
    assert "TOOLRUN_REDIS_URL" not in seen(environ)
    assert token["status"] == "error"
    assert platform.token not in seen(token)


def test_a_hard_link_out_cannot_be_made_and_read(
    agent: httpx.Client, platform: Platform, outside: Path
) -> None:
    script = f"import os\nos.link({str(outside / 'secret.txt')!r}, 'linked.txt')\n"
    call(agent, "write", file_path="link.py", content=script)

    made = call(agent, "bash", command="python3 link.py")
    read = call(agent, "read", file_path="linked.txt")
    grep = call(agent, "grep", pattern="exfiltrate")

    assert made["status"] == "error"
    assert not (platform.workspace / "linked.txt").exists()
    assert SECRET not in seen(read) + seen(grep)


def test_a_terminal_session_is_confined_too(
    platform: Platform, api: httpx.Client, outside: Path
) -> None:
    probe = (
        "import glob\n"
        f"print(open({str(outside / 'secret.txt')!r}).read()) if glob.glob({str(outside)!r}) "
        "else print('no outside')\n"
        "try:\n"
        f"    open({str(outside / 'secret.txt')!r})\n"
        "except OSError as exc:\n"
        f"    print({str(outside / 'secret.txt')!r} + ': ' + exc.strerror)\n"
        "seen = 0\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        seen += b'REDIS' in open(path, 'rb').read()\n"
        "    except OSError:\n"
        "        pass\n"
        "print('environments naming Redis:', seen)\n"
        "print('END')\n"
    )
    call(api, "write", file_path="probe.py", content=probe)
    waited = _script_in_a_session(api, "probe.py", timeout=20)

    assert waited["status"] == "success", waited
    assert waited["output"]["matched"], waited
    assert SECRET not in seen(waited)
    assert "no outside" in waited["output"]["output"]
    assert "environments naming Redis: 0" in waited["output"]["output"]
    assert _jail_targets(api, waited["call_id"]) == [str(outside / "secret.txt")]


def test_an_imported_stdio_server_is_confined_too(
    platform: Platform, api: httpx.Client, outside: Path
) -> None:
    imported = platform.cli("mcp", "import", "--name", "peeker", "--", sys.executable, ECHO_SERVER)
    assert imported.returncode == 0, imported.stderr
    wait_for(lambda: api.get("/v1/tools/peeker.peek").status_code == 200, 30, "peeker.peek")
    try:
        secret = call(api, "peeker.peek", path=str(outside / "secret.txt"))
        token = call(api, "peeker.peek", path=str(platform.settings.admin_token_path))
        environ = call(api, "peeker.peek", path="environ")
    finally:
        platform.cli("mcp", "remove", "peeker")

    assert secret["status"] == "success", secret
    assert SECRET not in seen(secret)
    assert "No such file or directory" in seen(secret)
    assert _jail_targets(api, secret["call_id"]) == [str(outside / "secret.txt")]
    assert platform.token not in seen(token)
    assert platform.redis_url not in seen(environ)


def test_health_and_the_worker_log_say_what_is_enforced(
    api: httpx.Client, platform: Platform
) -> None:
    health = api.get("/healthz").json()
    log = (platform.logs / "worker-execute.log").read_text()

    assert health["filesystem"] == "isolated (namespaces+landlock+seccomp)"
    assert health["network"] == "isolated"
    assert health["sandbox_paths"]["read_only"] == [str(Path(ECHO_SERVER).parent)]
    assert "filesystem: isolated (namespaces+landlock+seccomp)" in log


def test_what_the_jail_refused_is_told_and_logged(
    agent: httpx.Client, api: httpx.Client, outside: Path
) -> None:
    secret = str(outside / "secret.txt")

    result = call(agent, "bash", command=f"cat {secret}")
    events = api.get("/v1/security-events", params={"kind": "jail"}).json()

    assert result["status"] == "error"
    assert result["output"]["jail_denied"] == [
        {"path": secret, "error": "No such file or directory"}
    ]
    [event] = [event for event in events if event["call_id"] == result["call_id"]]
    assert event["target"] == secret
    assert event["reason"] == "the jail refused it: No such file or directory"
    assert event["tool_name"] == "bash"


def _jail_targets(api: httpx.Client, call_id: str) -> list[str]:
    """What the security log holds of the jail's refusals to one call."""
    events = api.get("/v1/security-events", params={"kind": "jail"}).json()
    return [event["target"] for event in events if event["call_id"] == call_id]


def test_a_fork_bomb_in_a_terminal_session_is_capped(api: httpx.Client) -> None:
    bomb = (
        "import os, time\n"
        "made = 0\n"
        "try:\n"
        "    for _ in range(600):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        made += 1\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
        "print('made', made)\n"
        "print('END')\n"
    )
    call(api, "write", file_path="bomb.py", content=bomb)
    waited = _script_in_a_session(api, "bomb.py", timeout=60)

    said = waited["output"]["output"]
    assert "refused 11" in said, said  # EAGAIN: the session's pids.max (256 here)
    made = int(said.split("made ")[1].split()[0])
    assert made < 256


def _script_in_a_session(api: httpx.Client, script: str, *, timeout: float) -> dict[str, Any]:
    """Run a workspace script in a Python terminal session until it prints END; the
    wait_for call's result. (The admin's client: the platform approves confirm calls.)"""
    opened = call(api, "terminal", operation="open", command="python3 -q")
    assert opened["status"] == "success", opened
    session = opened["output"]["session"]
    try:
        typed = f"exec(open({script!r}).read())\n"
        call(api, "terminal", operation="send", session=session, text=typed)
        return call(
            api, "terminal", operation="wait_for", session=session, pattern="^END", timeout=timeout
        )
    finally:
        call(api, "terminal", operation="close", session=session)

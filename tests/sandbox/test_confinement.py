"""The jail every tool process gets: attacks on what lies outside the workspace fail, real
work inside it runs. Calls go through the Executor with every approval granted: what stops
these commands must be the jail, not the allowlist or the risk rating."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from tests.sandbox.test_network import launched, require, starved

from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.permissions.approvals import AutoApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.sandbox.confinement import Confinement, call_confinement, enforcement
from toolrun.sandbox.denials import denials
from toolrun.sandbox.fs import write_bytes_atomic
from toolrun.sandbox.jail.plan import Mount
from toolrun.sandbox.output import BoundedBytes
from toolrun.sandbox.paths import Workspace
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult

SECRET = "s3cret-outside-the-workspace"  # noqa: S105 - what must never come back
ENV_SECRET = "TOOLRUN_TEST_BROKER_PASSWORD"  # noqa: S105
VENV_BIN = str(Path(sys.executable).parent)


@pytest.fixture
def outside(workspace: Path) -> Path:
    """The directory next to the workspace, with a secret the worker's user may read."""
    folder = workspace.parent / "outside"
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


@pytest.fixture
def settings(workspace: Path, tmp_path: Path) -> Settings:
    home = tmp_path / "state"
    home.mkdir()
    (home / "admin.token").write_text("trk_" + SECRET + "\n")
    return Settings(
        workspace=workspace,
        home=home,
        command_allowlist=None,  # no allowlist: the jail alone is on trial
        sandbox_path=f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
        sandbox_max_processes=64,
    )


@pytest.fixture
def jail(settings: Settings) -> Iterator[Confinement]:
    state = enforcement(settings)
    require(None if state.filesystem_isolated else state.filesystem)
    with call_confinement(settings, lambda refusal: None) as found:
        assert found is not None
        yield found


def call(settings: Settings, jail: Confinement, tool: str, **arguments: object) -> ToolResult:
    ctx = ToolContext.create(settings, jail=jail, approver=AutoApprover(dangerous=True))
    return Executor(ToolRegistry.with_builtins()).execute(
        ToolCall(tool_name=tool, arguments=arguments), ctx
    )


def bash(settings: Settings, jail: Confinement, command: str) -> ToolResult:
    return call(settings, jail, "bash", command=command, timeout=60)


def said(result: ToolResult) -> str:
    output = result.output or {}
    return f"{output.get('stdout', '')}\n{output.get('stderr', '')}\n{result.error or ''}"


READERS = [
    "cat {secret}",
    "head -n 5 {secret}",
    "tail {secret}",
    "sort {secret}",
    "cut -c1-100 {secret}",
    "diff /dev/null {secret}",
    "grep -r s3cret {outside}",
    "rg s3cret {outside}",
    "cat < {secret}",
    "cat {relative}",
    "git diff --no-index /dev/null {secret}",
    "find {outside} -type f -exec cat {{}} +",
    "python3 -c 'print(open(\"{secret}\").read())'",
    'node -e \'console.log(require("fs").readFileSync("{secret}", "utf8"))\'',
    "perl -ne print {secret}",
    "awk 1 {secret}",
    "sed -n p {secret}",
    "dd if={secret} status=none",
    "tar -cf - -C {outside} . | tar -xOf -",
    "cp {secret} copied && cat copied",
]


@pytest.mark.parametrize("command", READERS)
def test_programs_cannot_read_outside_the_workspace(
    settings: Settings, jail: Confinement, outside: Path, workspace: Path, command: str
) -> None:
    inside = workspace / "inside"  # the control: the same command works on the same file here
    inside.mkdir()
    (inside / "secret.txt").write_text(SECRET + "\n")

    control = bash(settings, jail, _reading(command, inside, "inside/secret.txt"))
    result = bash(settings, jail, _reading(command, outside, "../outside/secret.txt"))

    assert SECRET in said(control), said(control)
    assert SECRET not in said(result)


def _reading(command: str, folder: Path, relative: str) -> str:
    return command.format(secret=folder / "secret.txt", outside=folder, relative=relative)


@pytest.mark.parametrize(
    ("name", "script"),
    [
        ("read.py", "print(open('{secret}').read())"),
        ("read.js", "console.log(require('fs').readFileSync('{secret}', 'utf8'))"),
        ("Makefile", "all:\n\tcat {secret}\n"),
    ],
)
def test_scripts_written_into_the_workspace_cannot_read_outside(
    settings: Settings, jail: Confinement, outside: Path, workspace: Path, name: str, script: str
) -> None:
    (workspace / name).write_text(script.format(secret=outside / "secret.txt"))
    runner = {"read.py": "python3 read.py", "read.js": "node read.js", "Makefile": "make"}

    result = bash(settings, jail, runner[name])

    assert SECRET not in said(result)
    assert result.status == "error"


def test_the_platforms_home_is_not_there(settings: Settings, jail: Confinement) -> None:
    home = settings.platform_home

    for command in (f"cat {home}/admin.token", f"ls -A {home}", f"touch {home}/planted"):
        result = bash(settings, jail, command)
        assert result.status == "error"
        assert SECRET not in said(result)
    assert not (home / "planted").exists()


def test_passwd_names_only_the_tools_user(settings: Settings, jail: Confinement) -> None:
    result = bash(settings, jail, "cat /etc/passwd; id -un; ls /etc/shadow")

    users = [line.split(":")[0] for line in result.output["stdout"].splitlines()[:-1]]
    assert users == ["root", "toolrun", "nobody"]
    assert result.output["stdout"].splitlines()[-1] == "toolrun"
    assert "No such file" in result.output["stderr"]


def test_the_view_holds_nothing_of_the_host_but_the_system(
    settings: Settings, jail: Confinement
) -> None:
    result = bash(settings, jail, "ls -A /root /home /var /run /srv /mnt /boot /sys 2>&1; true")

    listed = result.output["stdout"]
    assert "No such file or directory" in listed
    assert "admin.token" not in listed
    assert ".bash_history" not in listed


def test_other_processes_and_their_environment_are_invisible(
    settings: Settings, jail: Confinement, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SECRET, SECRET)  # the worker's own environment
    script = (
        "import glob\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        print(open(path, 'rb').read())\n"
        "    except OSError as exc:\n"
        "        print(path, exc)\n"
    )

    result = bash(settings, jail, f'python3 -c "{script}"; ps -e -o pid=,comm=')

    assert SECRET not in said(result)
    pids = [line.split()[0] for line in result.output["stdout"].splitlines() if line[:1] == " "]
    assert len(pids) <= 5  # init, bash, python or ps: this call's processes only


def test_hard_links_to_outside_files_cannot_be_made(
    settings: Settings, jail: Confinement, outside: Path, workspace: Path
) -> None:
    secret = outside / "secret.txt"

    by_ln = bash(settings, jail, f"ln {secret} linked")
    by_python = bash(settings, jail, f"python3 -c \"import os; os.link('{secret}', 'py')\"")
    read = call(settings, jail, "read", file_path="linked")

    assert by_ln.status == by_python.status == "error"
    assert not (workspace / "linked").exists()
    assert not (workspace / "py").exists()
    assert SECRET not in said(read)
    assert secret.stat().st_nlink == 1


def test_symlinks_made_inside_lead_nowhere_outside(
    settings: Settings, jail: Confinement, outside: Path
) -> None:
    secret = outside / "secret.txt"
    made = bash(
        settings,
        jail,
        f"ln -s {secret} link && python3 -c \"import os; os.symlink('{secret}', 'py')\"",
    )
    through = bash(settings, jail, "cat link py")
    by_tools = [
        call(settings, jail, "read", file_path="link"),
        call(settings, jail, "grep", pattern="s3cret"),
    ]

    assert made.status == "success"
    assert SECRET not in said(through)
    for result in by_tools:
        assert SECRET not in said(result)


def test_a_checked_out_repository_with_links_out_leads_nowhere(
    settings: Settings, jail: Confinement, outside: Path
) -> None:
    commands = (
        "git init -q repo && cd repo && "
        f"ln -s {outside / 'secret.txt'} leak && ln -s ../../outside/secret.txt rel && "
        "git add . && git -c user.name=a -c user.email=a@b commit -qm links && "
        "rm leak rel && git checkout -- . && cat leak rel; cd .. && git clone -q repo copy && "
        "cat copy/leak copy/rel"
    )

    result = bash(settings, jail, commands)

    assert SECRET not in said(result)


def test_writes_outside_the_workspace_change_nothing(
    settings: Settings, jail: Confinement, outside: Path
) -> None:
    before = sorted(p.name for p in outside.iterdir())
    commands = [
        f"echo planted > {outside}/new.txt",
        f"python3 -c \"open('{outside}/py.txt', 'w').write('x')\"",
        f"cp /etc/hostname {outside}/copied",
        f"rm {outside}/secret.txt",
        f"mv {outside}/secret.txt moved.txt",
        "echo 1 > /proc/sys/vm/drop_caches",
        "echo x > /usr/planted",
    ]

    for command in commands:
        assert bash(settings, jail, command).status == "error", command
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
    assert not Path("/usr/planted").exists()


def test_only_the_minimal_devices_exist(settings: Settings, jail: Confinement) -> None:
    result = bash(settings, jail, "ls /dev; ls /dev/vda /dev/sda /dev/mem /dev/kmsg 2>&1; true")

    names = set(result.output["stdout"].split())
    assert {"null", "zero", "urandom", "random", "tty", "shm"} <= names
    assert not {"vda", "sda", "mem", "kmsg", "console"} & names
    made = bash(settings, jail, "mknod disk b 8 0")
    assert made.status == "error"


def test_a_set_uid_program_cannot_be_planted(
    settings: Settings, jail: Confinement, workspace: Path
) -> None:
    made = bash(settings, jail, "cp /bin/true planted && chmod u+s,g+s planted")
    created = bash(
        settings,
        jail,
        "python3 -c \"import os; os.close(os.open('direct', os.O_CREAT|os.O_WRONLY, 0o4755))\"",
    )

    assert made.status == created.status == "error"
    assert not (workspace / "planted").stat().st_mode & (stat.S_ISUID | stat.S_ISGID)
    assert not (workspace / "direct").exists()


def test_unix_sockets_of_the_host_are_out_of_reach(
    settings: Settings, jail: Confinement, tmp_path: Path
) -> None:
    path = tmp_path / "service.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        script = (
            "import socket\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"s.connect('{path}')\n"
            "print('connected')"
        )
        result = bash(settings, jail, f'python3 -c "{script}"')

    assert result.status == "error"
    assert "connected" not in result.output["stdout"]


def test_a_fork_bomb_is_capped(settings: Settings, jail: Confinement) -> None:
    script = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(500):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
        "print(n)\n"
    )

    result = bash(settings, jail, f'python3 -c "{script}"')

    lines = result.output["stdout"].splitlines()
    assert lines[0] == "refused 11"  # EAGAIN
    assert int(lines[-1]) < settings.sandbox_max_processes


def test_nothing_of_a_call_runs_after_it(settings: Settings, jail: Confinement) -> None:
    result = bash(settings, jail, "sleep 4242 & setsid sleep 4243 & nohup sleep 4244 &")

    assert result.status == "success"
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if (p.info["cmdline"] or [""])[-1] in ("4242", "4243", "4244")
    ]
    assert left == []


def test_read_only_tools_see_the_workspace_read_only(
    settings: Settings, jail: Confinement, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("found here\n")
    reader = ToolContext.create(settings, jail=jail).for_level(PermissionLevel.READ_ONLY)
    out, err = BoundedBytes(4096), BoundedBytes(4096)

    grep = call(settings, jail, "grep", pattern="found", output_mode="content")
    ended = reader.runner.run(
        ["/bin/sh", "-c", "echo more >> notes.txt"], timeout_s=10, stdout=out, stderr=err
    )

    assert "found here" in str(grep.output)
    assert ended.exit_code != 0
    assert "Read-only file system" in err.data().decode()
    assert (workspace / "notes.txt").read_text() == "found here\n"
    assert bash(settings, jail, "echo more >> notes.txt").status == "success"


REAL_WORK = {
    "pytest": (
        {
            "proj/calc.py": "def add(a, b):\n    return a + b\n",
            "proj/test_calc.py": (
                "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
            ),
        },
        "cd proj && python3 -m pytest -q -p no:cacheprovider",
        "1 passed",
    ),
    "venv and pip": (
        {},  # the wheel is written by the test
        "/usr/bin/python3 -m venv .venv && .venv/bin/pip install -q --no-index "
        "mypkg-0.1-py3-none-any.whl && .venv/bin/python -c 'import mypkg; print(mypkg.VALUE)'",
        "42",
    ),
    "npm test": (
        {
            "js/package.json": (
                '{"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}}'
            ),
            "js/test.js": "console.log('js ok')\n",
        },
        "cd js && npm test",
        "js ok",
    ),
    "make": (
        {
            "Makefile": (
                "all:\n\tprintf 'int main(void){return 0;}' > h.c && cc -o h h.c && ./h "
                "&& echo made\n"
            )
        },
        "make -s",
        "made",
    ),
    "git": (
        {"a.txt": "a\n"},
        "git init -q && git add a.txt && git -c user.name=a -c user.email=a@b commit -qm one "
        "&& git log --format=%s",
        "one",
    ),
}


@pytest.mark.parametrize("case", sorted(REAL_WORK))
def test_real_work_runs_inside_the_view(
    settings: Settings, jail: Confinement, workspace: Path, case: str
) -> None:
    files, command, expected = REAL_WORK[case]
    _write_wheel(workspace / "mypkg-0.1-py3-none-any.whl")
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)

    result = bash(settings, jail, command)

    assert result.status == "success", said(result)
    assert expected in result.output["stdout"]


def _write_wheel(path: Path) -> None:
    """A minimal wheel of one module, for pip to install with no index."""
    info = "mypkg-0.1.dist-info"
    files = {
        "mypkg.py": "VALUE = 42\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: mypkg\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in {**files, f"{info}/RECORD": record}.items():
            wheel.writestr(name, text)


def test_cargo_builds_with_the_toolchain_as_extra_paths(workspace: Path, tmp_path: Path) -> None:
    cargo = Path.home() / ".cargo" / "bin" / "cargo"
    if not cargo.exists():
        pytest.skip("no cargo in ~/.cargo here")
    settings = Settings(
        workspace=workspace,
        home=tmp_path / "state",
        command_allowlist=None,
        sandbox_path=f"{cargo.parent}:/usr/bin:/bin",
        sandbox_read_only_paths=["~/.cargo", "~/.rustup"],
    )
    (workspace / "crate" / "src").mkdir(parents=True)
    (workspace / "crate" / "Cargo.toml").write_text(
        '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (workspace / "crate" / "src" / "main.rs").write_text('fn main() { println!("hi"); }\n')
    with call_confinement(settings, lambda refusal: None) as jail:
        assert jail is not None
        result = bash(settings, jail, "cd crate && cargo build -q && ./target/debug/hello")

    assert result.status == "success", said(result)
    assert result.output["stdout"] == "hi"


def test_extra_paths_are_validated(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "state"
    for entry, problem in [
        ("/", "whole filesystem"),
        ("/proc/self", "live state"),
        ("/run", "live state"),
        (str(tmp_path), "platform's home"),
    ]:
        settings = Settings(workspace=workspace, home=home, sandbox_read_only_paths=[entry])
        with pytest.raises(ValueError, match=problem):
            enforcement(settings)
    with pytest.raises(ValueError, match="must be absolute"):
        Settings(workspace=workspace, sandbox_read_write_paths=["relative/dir"])


def test_isolation_off_is_reported(workspace: Path) -> None:
    state = enforcement(Settings(workspace=workspace, fs_isolation="off"))

    assert state.filesystem == "degraded: turned off (TOOLRUN_FS_ISOLATION=off)"


def test_the_launcher_runs_a_program_in_the_same_jail(
    settings: Settings, jail: Confinement, outside: Path, workspace: Path
) -> None:
    plan = jail.plan(cwd=workspace, rlimits=(), env={"PATH": "/usr/bin:/bin"})
    argv, env = launched(plan, ["/bin/sh", "-c", f"cat {outside}/secret.txt; id -un; echo $HOME"])
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**env, ENV_SECRET: SECRET},
    )

    assert SECRET not in done.stdout + done.stderr
    assert plan.to_json() not in " ".join(argv)  # the plan (and its env) is no argument
    assert done.stdout.splitlines() == ["toolrun", ""]


@pytest.mark.parametrize("mode", ["required", "auto"])
def test_a_worker_that_cannot_isolate_says_so_and_refuses_when_required(
    workspace: Path, tmp_path: Path, mode: str
) -> None:
    env = {
        **os.environ,
        "TOOLRUN_WORKSPACE": str(workspace),
        "TOOLRUN_HOME": str(tmp_path / "state"),
        "TOOLRUN_REDIS_URL": "redis://127.0.0.1:1/0",  # never reached when it refuses
        "TOOLRUN_FS_ISOLATION": mode,
    }
    wrapper = starved()
    require(None if wrapper else "cannot lower namespace quotas here")
    assert wrapper is not None
    worker = [sys.executable, "-m", "toolrun", "worker", "--level", "execute"]
    # Refusing, it exits; allowed to run degraded, it goes on to wait for its broker (here
    # nowhere), which it says: stopped then.
    started = subprocess.Popen(
        [*wrapper, *worker], stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    assert started.stderr is not None
    said = []
    with started.stderr:
        for line in started.stderr:
            said.append(line)
            if "the broker does not answer" in line:
                os.killpg(started.pid, signal.SIGKILL)
    started.wait(timeout=60)
    stderr = "".join(said)

    assert "filesystem: degraded: " in stderr
    assert "unshare: No space left on device" in stderr
    if mode == "required":
        assert started.returncode == 2
        assert "TOOLRUN_FS_ISOLATION=required and this worker cannot isolate" in stderr
    else:
        assert "TOOLRUN_FS_ISOLATION=required" not in stderr
        assert "waiting for it" in stderr


def test_what_the_jail_refused_is_in_the_output(
    settings: Settings, jail: Confinement, outside: Path, workspace: Path
) -> None:
    result = bash(settings, jail, f"cat {outside}/secret.txt missing.txt; touch /usr/x")

    assert result.output["jail_denied"] == [
        {"path": f"{outside}/secret.txt", "error": "No such file or directory"},
        {"path": "/usr/x", "error": "Read-only file system"},
    ]


def test_denials_are_read_from_what_programs_say() -> None:
    said_by_programs = (
        "cat: /srv/x: No such file or directory\n"
        "ls: cannot open directory '/work': Permission denied\n"
        "PermissionError: [Errno 13] Permission denied: '/proc/1/environ'\n"
        "chmod: changing permissions of 'planted': Operation not permitted\n"
        "cat: /ws/inside.txt: No such file or directory\n"
        "cat: /srv/x: No such file or directory\n"
    )

    assert denials(said_by_programs, Path("/ws")) == [
        ("/srv/x", "No such file or directory"),
        ("/work", "Permission denied"),
        ("/proc/1/environ", "Permission denied"),
    ]


def _with_install(jail: Confinement, install: Path) -> Confinement:
    """`jail` showing `install` (inside the workspace) read-only, as the platform's own
    virtualenv is when the workspace is toolrun's checkout."""
    assert jail.view is not None
    mounts = (*jail.view.mounts, Mount(str(install), str(install)))
    return dataclasses.replace(jail, view=dataclasses.replace(jail.view, mounts=mounts))


def test_the_platforms_code_in_the_workspace_cannot_be_changed_or_moved(
    settings: Settings, jail: Confinement, workspace: Path
) -> None:
    install = workspace / "venv"
    install.mkdir()
    (install / "python").write_text("the platform's interpreter\n")
    shown = _with_install(jail, install)

    written = bash(settings, shown, "echo evil > venv/python")
    moved = bash(settings, shown, "mv venv elsewhere")

    assert written.status == moved.status == "error"
    assert "Read-only file system" in said(written)
    assert "busy" in said(moved)  # a mount point cannot be renamed away
    assert (install / "python").read_text() == "the platform's interpreter\n"
    with pytest.raises(SandboxViolation, match="platform's own code"):  # the file tools
        write_bytes_atomic(Workspace(workspace, protected=(install,)), install / "python", b"x")


def test_a_link_planted_where_a_mount_source_was_is_not_followed(
    settings: Settings, jail: Confinement, workspace: Path, outside: Path
) -> None:
    install = workspace / "sub" / "inst"
    install.mkdir(parents=True)
    shown = _with_install(jail, install)

    moved = bash(settings, shown, "mv sub sub2")
    # What the pinning above prevents, done outside the jail: the next jail must not
    # follow the link planted where the mounted directory was.
    (workspace / "sub").rename(workspace / "sub2")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inst").symlink_to("../../outside")
    leaked = bash(settings, shown, "cat sub/inst/secret.txt")

    assert moved.status == "error"
    assert "busy" in said(moved)  # the directory leading to a mount is a mount point too
    assert leaked.status == "blocked"  # the jail is not built around a planted link
    assert "cannot confine the command" in said(leaked)
    assert SECRET not in said(leaked)

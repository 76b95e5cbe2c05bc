"""The CLI finds its platform the way git finds a repository: the nearest workspace whose
home `toolrun up` used, and the address of the platform running there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolrun.cli import app
from toolrun.cli._locate import ADDRESS_FILE, announce, hold, locate, running_api, withdraw
from toolrun.config import Settings


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace whose home `toolrun up` used (it holds an admin token); the test runs in
    a directory two levels below it, with no TOOLRUN_* settings."""
    for name in list(os.environ):
        if name.startswith("TOOLRUN_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    home = Settings(workspace=root).platform_home
    home.mkdir(parents=True)
    (home / "admin.token").write_text("the-admin-token\n")
    monkeypatch.chdir(root / "src" / "deep")
    return root


def test_a_subdirectory_finds_its_workspace_and_home(project: Path) -> None:
    found = locate(Settings())

    assert found.workspace == project
    assert found.platform_home == Settings(workspace=project).platform_home
    assert found.api == "http://127.0.0.1:8000"  # no platform runs there


def test_the_nearest_used_home_wins(project: Path) -> None:
    inner = project / "src"
    home = Settings(workspace=inner).platform_home
    home.mkdir(parents=True)
    (home / "admin.token").write_text("inner\n")

    assert locate(Settings()).workspace == inner


def test_a_home_never_used_by_toolrun_up_is_passed_over(project: Path) -> None:
    # As left by a command run here before: a database, no admin token.
    stray = Settings(workspace=project / "src" / "deep").platform_home
    stray.mkdir(parents=True)
    (stray / "toolrun.db").write_bytes(b"")

    assert locate(Settings()).workspace == project


def test_nothing_found_keeps_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TOOLRUN_WORKSPACE", raising=False)
    monkeypatch.delenv("TOOLRUN_HOME", raising=False)
    monkeypatch.chdir(tmp_path)

    assert locate(Settings()).workspace == tmp_path


def test_the_running_platforms_address_is_used_and_withdrawn(project: Path) -> None:
    home = Settings(workspace=project).platform_home
    assert hold(home)
    announce(home, "http://127.0.0.1:8001")

    assert (home / ADDRESS_FILE).stat().st_mode & 0o777 == 0o600
    assert locate(Settings()).api == "http://127.0.0.1:8001"
    withdraw(home)
    assert not (home / ADDRESS_FILE).exists()
    assert locate(Settings()).api == "http://127.0.0.1:8000"


def test_an_address_left_by_a_killed_platform_is_ignored(project: Path) -> None:
    home = Settings(workspace=project).platform_home
    # What a `toolrun up` killed with SIGKILL leaves: its record, its lock file, no holder.
    (home / ADDRESS_FILE).write_text('{"api": "http://127.0.0.1:8001", "pid": 1}')
    (home / "platform.lock").touch()

    assert running_api(home) is None
    held = subprocess.Popen(  # another process holding the lock: a platform running
        [sys.executable, "-c", LOCK_HOLDER, str(home / "platform.lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert held.stdout is not None
        assert held.stdout.readline() == "locked\n"
        assert running_api(home) == "http://127.0.0.1:8001"
        assert not hold(home)  # a second `toolrun up` on this home is refused
    finally:
        held.kill()
        held.communicate()
    (home / ADDRESS_FILE).write_text("{not json")
    assert running_api(home) is None


LOCK_HOLDER = """
import fcntl, sys, time
lock = open(sys.argv[1], "a")
fcntl.flock(lock, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def test_explicit_settings_win(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Settings(workspace=project).platform_home
    assert hold(home)
    announce(home, "http://127.0.0.1:8001")
    monkeypatch.setenv("TOOLRUN_API", "http://127.0.0.1:9")
    monkeypatch.setenv("TOOLRUN_WORKSPACE", str(project / "src"))

    found = locate(Settings())

    assert found.api == "http://127.0.0.1:9"
    assert found.workspace == project / "src"


def test_an_unreachable_platform_says_which_home_api_and_token(project: Path) -> None:
    home = Settings(workspace=project).platform_home
    assert hold(home)
    announce(home, "http://127.0.0.1:9")  # nothing listens there

    result = CliRunner().invoke(app, ["history"])

    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert "start the platform with `toolrun up`" in said
    assert f"used: home {home}; API http://127.0.0.1:9; token from {home / 'admin.token'}" in said

"""`toolrun logs`: the last lines of each process's log in the home, or followed."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from toolrun.cli import app


def home_with_logs(tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "home"
    folder = home / "logs"
    folder.mkdir(parents=True)
    (folder / "api.log").write_text("".join(f"api line {n}\n" for n in range(30)))
    (folder / "worker-read_only.log").write_text("ready.\n")
    return {"TOOLRUN_HOME": str(home), "TOOLRUN_WORKSPACE": str(tmp_path)}, folder


def test_the_last_lines_of_each_process(tmp_path: Path) -> None:
    env, _ = home_with_logs(tmp_path)

    result = CliRunner().invoke(app, ["logs", "-n", "2"], env=env)

    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "api              | api line 28",
        "api              | api line 29",
        "worker-read_only | ready.",
    ]


def test_unknown_processes_and_a_home_without_logs_are_named(tmp_path: Path) -> None:
    env, _ = home_with_logs(tmp_path)
    nobody = {**env, "TOOLRUN_HOME": str(tmp_path / "empty")}

    unknown = CliRunner().invoke(app, ["logs", "flowr"], env=env)
    empty = CliRunner().invoke(app, ["logs"], env=nobody)

    assert unknown.exit_code == 2
    assert "no log of flowr; there are: api, worker-read_only" in unknown.stderr
    assert empty.exit_code == 2
    assert f"no logs in {tmp_path / 'empty' / 'logs'}" in " ".join(empty.stderr.split())


def test_follow_prints_what_is_written_next(tmp_path: Path) -> None:
    env, folder = home_with_logs(tmp_path)
    following = subprocess.Popen(
        [sys.executable, "-m", "toolrun", "logs", "api", "-n", "0", "-f"],
        env={**env, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # it has read where the file ends
        with (folder / "api.log").open("a") as log:
            log.write("written later\n")
        assert following.stdout is not None
        assert following.stdout.readline() == "api | written later\n"
    finally:
        following.kill()
        following.communicate()  # closes its pipe

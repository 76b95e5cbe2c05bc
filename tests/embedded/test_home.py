"""The platform's home is its owner's only, made so and repaired at start."""

from __future__ import annotations

import os
from pathlib import Path

from toolrun.embedded.home import secure_home


def test_a_new_home_is_made_0700(tmp_path: Path) -> None:
    home = tmp_path / "state" / "project-abc"

    secure_home(home)

    assert home.stat().st_mode & 0o777 == 0o700


def test_an_existing_home_open_to_others_is_repaired(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "redis").mkdir(parents=True)
    home.chmod(0o755)
    (home / "redis").chmod(0o755)
    files = {
        home / "toolrun.db": 0o644,
        home / "redis" / "appendonly.aof": 0o664,
        home / "launcher": 0o755,  # an executable stays one, for its owner
    }
    for path, mode in files.items():
        path.write_text("call outputs")
        path.chmod(mode)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not the home's")
    outside.chmod(0o644)
    os.symlink(outside, home / "link")

    secure_home(home)

    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "redis").stat().st_mode & 0o777 == 0o700
    assert {path.name: path.stat().st_mode & 0o777 for path in files} == {
        "toolrun.db": 0o600,
        "appendonly.aof": 0o600,
        "launcher": 0o700,
    }
    assert outside.stat().st_mode & 0o777 == 0o644  # a link is not followed out of it

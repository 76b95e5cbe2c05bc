"""How the CLI finds the platform it talks to, the way git finds a repository.

A workspace is known by its home (`Settings.platform_home`), and a home that `toolrun up`
has used holds the admin token. From a subdirectory, the CLI walks up to the nearest
directory whose home holds one and takes it as the workspace. While `toolrun up` runs, its
home holds the API's address (`platform.json`), so `toolrun up --port 8001` needs nothing
more from the commands run next to it. Settings given explicitly (TOOLRUN_WORKSPACE,
TOOLRUN_HOME, TOOLRUN_API) always win.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import TypeVar

from toolrun.cli._settings import PlatformSettings

ADDRESS_FILE = "platform.json"  # in the home, while `toolrun up` runs
_LOCK = "platform.lock"  # held by the running `toolrun up`
_MARK = "admin.token"  # a home `toolrun up` has used
_held: list[int] = []  # this process's lock, open until it ends
S = TypeVar("S", bound=PlatformSettings)  # `Settings`, or the CLI's lighter `ApiSettings`


def locate(settings: S) -> S:
    """`settings` with the workspace found by walking up from it and the API of the
    platform running there, where neither was given explicitly."""
    given = settings.model_fields_set
    if not {"workspace", "home"} & given:
        found = _workspace_with_home(settings)
        if found is not None:
            settings = settings.model_copy(update={"workspace": found})
    if "api" not in given:
        running = running_api(settings.platform_home)
        if running is not None:
            settings = settings.model_copy(update={"api": running})
    return settings


def _workspace_with_home(settings: PlatformSettings) -> Path | None:
    """The nearest of the workspace and its parents whose home `toolrun up` has used."""
    start = settings.workspace.resolve()
    for candidate in (start, *start.parents):
        home = settings.model_copy(update={"workspace": candidate}).platform_home
        if (home / _MARK).is_file():
            return candidate
    return None


def hold(home: Path) -> bool:
    """Take `home`'s lock for this process's life (the kernel lets go of it when the
    process ends, however it ends); False when another process holds it: a platform
    already runs on this home."""
    lock = os.open(home / _LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return False
    _held.append(lock)
    return True


def announce(home: Path, api: str) -> None:
    """Record in `home` that this process, which holds its lock, serves the platform at
    `api` (mode 0600, replaced at once: a reader never sees half of it)."""
    partial = home / f".{ADDRESS_FILE}.{os.getpid()}"
    partial.touch(mode=0o600)
    partial.write_text(json.dumps({"api": api, "pid": os.getpid()}))
    partial.replace(home / ADDRESS_FILE)


def withdraw(home: Path) -> None:
    """Remove this process's record from `home` (another process's stays): the CLI stops
    using its address. The lock stays held until the process ends, after its children
    have stopped: no other platform starts on the home while this one is still stopping."""
    path = home / ADDRESS_FILE
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()


def running_api(home: Path) -> str | None:
    """The API address of the `toolrun up` running on `home`, None when none runs: its
    lock is free (a record left by one that was killed is ignored), or the record is not
    this user's."""
    try:
        record_path = home / ADDRESS_FILE
        if record_path.stat().st_uid != os.getuid() or not _locked(home / _LOCK):
            return None
        return str(json.loads(record_path.read_text())["api"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _locked(path: Path) -> bool:
    """True while a process holds `path`'s lock (a `toolrun up` running)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # and with it a lock taken here
    return False

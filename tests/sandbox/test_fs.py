"""Confined file I/O: a path swapped for a link after resolution cannot redirect a read or write."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.snapshots import snapshot

from toolrun.errors import SandboxViolation, ToolExecutionError
from toolrun.sandbox.fs import make_directory, read_bytes, write_bytes_atomic
from toolrun.sandbox.paths import Workspace

SECRET = b"top secret\n"
DEADLINE_S = 5.0


@pytest.fixture
def space(workspace: Path) -> Workspace:
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "b" / "data.txt").write_bytes(b"inside\n")
    (workspace / "notes.txt").write_bytes(b"hello\n")
    return Workspace(workspace)


@pytest.fixture
def outside(workspace: Path) -> Path:
    """Outside tree shaped like the workspace one, so a redirected call would succeed."""
    base = workspace.parent / "outside"
    (base / "b").mkdir()
    (base / "b" / "data.txt").write_bytes(SECRET)
    (base / "data.txt").write_bytes(SECRET)
    return base


def temp_leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if ".toolrun-" in name)


def swap_for_link(directory: Path, target: Path | str) -> None:
    """Move `directory` aside and put a symlink to `target` in its place."""
    directory.rename(directory.with_name(directory.name + ".orig"))
    directory.symlink_to(target)


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


# --- read_bytes -------------------------------------------------------------------------


def test_read_returns_bytes_and_stat(space: Workspace) -> None:
    path = space.resolve("a/b/data.txt")
    data, info = read_bytes(space, path)
    assert data == b"inside\n"
    assert info.st_size == len(data)
    assert info.st_ino == path.stat().st_ino


def test_read_binary_is_returned_verbatim(space: Workspace) -> None:
    blob = bytes(range(256)) * 4
    (space.root / "blob.bin").write_bytes(blob)
    assert read_bytes(space, space.resolve("blob.bin"))[0] == blob


def test_read_missing_file_is_an_execution_error(space: Workspace) -> None:
    with pytest.raises(ToolExecutionError, match=re.escape("file not found: a/missing.txt")):
        read_bytes(space, space.resolve("a/missing.txt"))


def test_read_under_missing_directory_is_an_execution_error(space: Workspace) -> None:
    with pytest.raises(ToolExecutionError, match="file not found"):
        read_bytes(space, space.resolve("nope/deeper/x.txt"))


@pytest.mark.parametrize("name", [".", "a", "a/b"], ids=["root", "dir", "nested-dir"])
def test_read_directory_is_an_execution_error(space: Workspace, name: str) -> None:
    with pytest.raises(ToolExecutionError, match="is a directory, not a file"):
        read_bytes(space, space.resolve(name))


def test_read_fifo_is_refused_without_blocking(space: Workspace) -> None:
    """A FIFO with no writer must not hang the worker: it is simply not a regular file."""
    fifo = space.root / "pipe"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            read_bytes(space, space.resolve("pipe"))
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)
        else:
            outcome.append(None)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(DEADLINE_S)
    hung = reader.is_alive()
    if hung:  # release the blocked open() so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(DEADLINE_S)
    assert not hung, "read_bytes blocked opening a FIFO that has no writer"
    assert isinstance(outcome[0], ToolExecutionError)
    assert "not a regular file" in str(outcome[0])


@pytest.mark.parametrize(
    "name", ["notes.txt/x.txt", "notes.txt/deeper/x.txt"], ids=["child", "grandchild"]
)
def test_read_below_a_regular_file_is_not_a_sandbox_violation(space: Workspace, name: str) -> None:
    """A file used as a directory is the agent's mistake, not an attack: report it plainly."""
    with pytest.raises(ToolExecutionError):
        read_bytes(space, space.resolve(name))


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.parametrize(
    ("name", "swap"),
    [
        pytest.param("missing.txt", False, id="missing"),
        pytest.param("a", False, id="directory"),
        pytest.param("a/b/data.txt", True, id="dir-swapped-for-link"),
    ],
)
def test_failed_read_leaks_no_descriptor(
    space: Workspace, outside: Path, name: str, swap: bool
) -> None:
    path = space.resolve(name)
    if swap:
        swap_for_link(space.root / "a", outside)
    before = _open_descriptors()
    for _ in range(3):
        with contextlib.suppress(Exception):  # the error type is checked elsewhere
            read_bytes(space, path)
    assert _open_descriptors() == before


def test_read_refuses_unresolved_link_component(space: Workspace) -> None:
    """Callers must pass resolved paths; a link component left in is refused, not followed."""
    (space.root / "inner_link").symlink_to("a")
    with pytest.raises(SandboxViolation):
        read_bytes(space, space.root / "inner_link" / "b" / "data.txt")


# --- TOCTOU: resolve, then a component becomes a link pointing outside ------------------


SWAPS = [
    pytest.param("a", "outside", id="first-dir-to-outside-dir"),
    pytest.param("a/b", "outside/b", id="last-dir-to-outside-dir"),
    pytest.param("a", "outside/missing", id="first-dir-to-dangling-outside"),
    pytest.param("a/b", "/", id="last-dir-to-filesystem-root"),
]


def _swap_target(template: str, tmp: Path) -> Path:
    return Path(template) if template.startswith("/") else tmp / template


@pytest.mark.parametrize(("component", "target"), SWAPS)
def test_read_after_directory_swap_is_a_violation(
    space: Workspace, outside: Path, component: str, target: str
) -> None:
    path = space.resolve("a/b/data.txt")
    swap_for_link(space.root / component, _swap_target(target, outside.parent))
    with pytest.raises(SandboxViolation, match="changed to a symlink"):
        read_bytes(space, path)


@pytest.mark.parametrize(("component", "target"), SWAPS)
def test_write_after_directory_swap_is_a_violation_and_outside_is_untouched(
    space: Workspace, outside: Path, component: str, target: str
) -> None:
    path = space.resolve("a/b/data.txt")
    swap_for_link(space.root / component, _swap_target(target, outside.parent))
    before = snapshot(outside)
    with pytest.raises(SandboxViolation, match="changed to a symlink"):
        write_bytes_atomic(space, path, b"pwned\n")
    assert snapshot(outside) == before
    assert (outside / "b" / "data.txt").read_bytes() == SECRET


def test_write_of_new_file_after_missing_parent_became_a_link(
    space: Workspace, outside: Path
) -> None:
    """The parent did not exist at resolve time; a dangling link put there must not be created."""
    path = space.resolve("fresh/dir/new.txt")
    (space.root / "fresh").symlink_to(outside / "made")
    before = snapshot(outside)
    with pytest.raises(SandboxViolation):
        write_bytes_atomic(space, path, b"pwned\n")
    assert snapshot(outside) == before
    assert not (outside / "made").exists()


def test_read_after_file_swap_is_a_violation(space: Workspace, outside: Path) -> None:
    path = space.resolve("a/b/data.txt")
    path.unlink()
    path.symlink_to(outside / "data.txt")
    with pytest.raises(SandboxViolation, match="changed to a symlink"):
        read_bytes(space, path)


def test_write_after_file_swap_replaces_the_link_not_its_target(
    space: Workspace, outside: Path
) -> None:
    path = space.resolve("a/b/data.txt")
    path.unlink()
    path.symlink_to(outside / "data.txt")
    before = snapshot(outside)
    write_bytes_atomic(space, path, b"new\n")
    assert snapshot(outside) == before
    assert not path.is_symlink()
    assert path.read_bytes() == b"new\n"


def test_write_after_file_swap_does_not_take_the_links_mode(
    space: Workspace, outside: Path, umask_022: None
) -> None:
    """A swapped-in link has mode 0o777; the file that replaces it must not become executable."""
    path = space.resolve("a/b/data.txt")
    path.unlink()
    path.symlink_to(outside / "data.txt")
    write_bytes_atomic(space, path, b"new\n")
    assert stat.S_IMODE(path.stat().st_mode) & 0o111 == 0


# --- write_bytes_atomic -------------------------------------------------------------------


def test_write_creates_file_and_parents(space: Workspace) -> None:
    path = space.resolve("new/deeper/file.txt")
    assert write_bytes_atomic(space, path, b"content\n") is True
    assert path.read_bytes() == b"content\n"
    assert temp_leftovers(path.parent) == []


def test_write_replaces_existing_file(space: Workspace) -> None:
    path = space.resolve("notes.txt")
    assert write_bytes_atomic(space, path, b"replaced\n") is False
    assert path.read_bytes() == b"replaced\n"
    assert temp_leftovers(space.root) == []


def test_write_replaces_by_rename_not_in_place(space: Workspace) -> None:
    """A reader holding the old file keeps the old bytes: the new content is a new inode."""
    path = space.resolve("notes.txt")
    with path.open("rb") as held:
        old_inode = os.fstat(held.fileno()).st_ino
        write_bytes_atomic(space, path, b"replaced\n")
        assert held.read() == b"hello\n"
    assert path.stat().st_ino != old_inode


def test_write_leaves_only_the_target_in_its_directory(space: Workspace) -> None:
    path = space.resolve("a/b/data.txt")
    for round_ in range(5):
        write_bytes_atomic(space, path, f"round {round_}\n".encode())
    assert sorted(os.listdir(path.parent)) == ["data.txt"]


def test_write_empty_content(space: Workspace) -> None:
    path = space.resolve("notes.txt")
    write_bytes_atomic(space, path, b"")
    assert path.read_bytes() == b""


@pytest.mark.parametrize(
    "mode",
    [0o600, 0o640, 0o644, 0o755, 0o664, 0o666],
    ids=["0600", "0640", "0644", "0755", "0664", "0666"],
)
def test_write_keeps_existing_mode(space: Workspace, mode: int, umask_022: None) -> None:
    """The replacement file has the mode the old one had, whatever the process umask."""
    path = space.resolve("notes.txt")
    path.chmod(mode)
    write_bytes_atomic(space, path, b"replaced\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_write_new_file_honours_umask(space: Workspace, umask_022: None) -> None:
    path = space.resolve("fresh.txt")
    write_bytes_atomic(space, path, b"x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.mark.parametrize("name", [".", "a", "a/b"], ids=["root", "dir", "nested-dir"])
def test_write_onto_directory_is_an_execution_error(space: Workspace, name: str) -> None:
    path = space.resolve(name)
    before = snapshot(space.root)
    with pytest.raises(ToolExecutionError, match="is a directory, not a file"):
        write_bytes_atomic(space, path, b"x")
    assert snapshot(space.root) == before


@pytest.mark.parametrize(
    "name", ["notes.txt/x.txt", "notes.txt/deeper/x.txt"], ids=["child", "grandchild"]
)
def test_write_below_a_regular_file_is_not_a_sandbox_violation(space: Workspace, name: str) -> None:
    before = snapshot(space.root)
    with pytest.raises(ToolExecutionError):
        write_bytes_atomic(space, space.resolve(name), b"x")
    assert snapshot(space.root) == before


def _failing(exc: BaseException) -> object:
    def fail(*_args: object, **_kwargs: object) -> None:
        raise exc

    return fail


@pytest.mark.parametrize(
    "target",
    ["fsync", "rename"],
    ids=["fails-before-rename", "rename-fails"],
)
def test_failed_write_keeps_old_content_and_no_temp(
    space: Workspace, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    path = space.resolve("notes.txt")
    monkeypatch.setattr(f"toolrun.sandbox.fs.os.{target}", _failing(OSError(errno.ENOSPC, "full")))
    with pytest.raises(ToolExecutionError, match=re.escape("cannot write notes.txt")):
        write_bytes_atomic(space, path, b"half" * 10_000)
    monkeypatch.undo()
    assert path.read_bytes() == b"hello\n"
    assert temp_leftovers(space.root) == []


def test_interrupted_write_keeps_old_content_and_no_temp(
    space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = space.resolve("notes.txt")
    monkeypatch.setattr("toolrun.sandbox.fs.os.fsync", _failing(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        write_bytes_atomic(space, path, b"half")
    monkeypatch.undo()
    assert path.read_bytes() == b"hello\n"
    assert temp_leftovers(space.root) == []


def test_failed_create_leaves_no_file(space: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    path = space.resolve("a/b/new.txt")
    monkeypatch.setattr("toolrun.sandbox.fs.os.fsync", _failing(OSError(errno.EIO, "io")))
    with pytest.raises(ToolExecutionError):
        write_bytes_atomic(space, path, b"x")
    monkeypatch.undo()
    assert sorted(os.listdir(path.parent)) == ["data.txt"]


def test_concurrent_reader_never_sees_a_half_written_file(space: Workspace) -> None:
    """Readers racing the writer see exactly the old or the new bytes, never a mix or a gap."""
    path = space.resolve("big.bin")
    versions = [b"a" * 300_000, b"b" * 300_000]
    write_bytes_atomic(space, path, versions[0])
    done = threading.Event()
    seen: list[bytes] = []
    bad: list[str] = []

    def reader() -> None:
        while not done.is_set():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                bad.append("file missing during replace")
                continue
            if data not in versions:
                bad.append(f"torn read of {len(data)} bytes")
            seen.append(data[:1])

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        for round_ in range(40):
            write_bytes_atomic(space, path, versions[round_ % 2])
    finally:
        done.set()
        thread.join(DEADLINE_S)
    assert not thread.is_alive()
    assert bad == []
    assert seen


# --- make_directory ---------------------------------------------------------------------


def test_make_directory_creates_the_missing_parents(space: Workspace) -> None:
    make_directory(space, space.root / "a" / "new" / "deeper")

    assert (space.root / "a" / "new" / "deeper").is_dir()


def test_make_directory_never_goes_through_a_link(space: Workspace, outside: Path) -> None:
    swap_for_link(space.root / "a", outside)

    with pytest.raises(SandboxViolation, match="symlink"):
        make_directory(space, space.root / "a" / "made")

    assert not (outside / "made").exists()


def test_make_directory_under_a_file_is_an_execution_error(space: Workspace) -> None:
    with pytest.raises(ToolExecutionError, match="not a directory"):
        make_directory(space, space.root / "notes.txt" / "sub")

"""Landlock on the real kernel: each test confines a fresh interpreter, then tries things."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from toolrun.sandbox.jail import landlock

MODULE = Path(landlock.__file__)  # the child programs load it by path: standard library only

ABI = landlock.abi_version()
pytestmark = pytest.mark.skipif(ABI == 0, reason="this kernel has no Landlock, or it is off")
# What an exec of a system program needs to read.
SYSTEM = ["/usr", "/bin", "/lib", "/lib64", "/etc"]

# Loads the module by path (it is stdlib-only); P holds the test's paths; attempt() prints
# "<label>: ok" or "<label>: <errno name>".
PRELUDE = f"""
import errno, importlib.util, json, os, socket, subprocess, sys
spec = importlib.util.spec_from_file_location("landlock", {str(MODULE)!r})
landlock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(landlock)
P = json.loads(sys.argv[1])

def attempt(label, call, *args):
    try:
        call(*args)
    except OSError as error:
        print(f"{{label}}: {{errno.errorcode[error.errno]}}")
    else:
        print(f"{{label}}: ok")

def read(path):
    with open(path, "rb") as file:
        file.read()

def write(path):
    with open(path, "ab") as file:
        file.write(b"more")
"""


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, str]:
    """A read-only dir, a read-write dir and one outside both, a file in each."""
    for name in ("ro", "rw", "outside"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "data.txt").write_bytes(b"data\n")
    (tmp_path / "ro" / "sub").mkdir()
    (tmp_path / "ro" / "other.txt").write_bytes(b"other\n")
    return {name: str(tmp_path / name) for name in ("ro", "rw", "outside")}


def _confined(body: str, paths: dict[str, str]) -> dict[str, str]:
    """Run PRELUDE + body in a new interpreter; its "<label>: <result>" lines, by label."""
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(paths)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines())


def test_abi_is_reported_and_restrict_self_uses_it(tree: dict[str, str]) -> None:
    assert ABI >= 1
    seen = _confined('print("abi:", landlock.restrict_self([], []))', tree)
    assert seen == {"abi": str(ABI)}


def test_read_only_dir_is_read_but_not_changed(tree: dict[str, str]) -> None:
    seen = _confined(
        """
        landlock.restrict_self([P["ro"]], [])
        attempt("read", read, P["ro"] + "/data.txt")
        attempt("list", os.listdir, P["ro"] + "/sub")
        attempt("write", write, P["ro"] + "/data.txt")
        attempt("truncate", os.truncate, P["ro"] + "/data.txt", 0)
        attempt("create", write, P["ro"] + "/new.txt")
        attempt("remove", os.remove, P["ro"] + "/data.txt")
        attempt("rename", os.rename, P["ro"] + "/data.txt", P["ro"] + "/moved.txt")
        attempt("mkdir", os.mkdir, P["ro"] + "/made")
        attempt("rmdir", os.rmdir, P["ro"] + "/sub")
        attempt("symlink", os.symlink, "data.txt", P["ro"] + "/link")
        attempt("mkfifo", os.mkfifo, P["ro"] + "/fifo")
        attempt("read outside", read, P["outside"] + "/data.txt")
        attempt("list outside", os.listdir, P["outside"])
        """,
        tree,
    )
    assert seen.pop("read") == seen.pop("list") == "ok"
    assert set(seen.values()) == {"EACCES"}, seen
    assert sorted(os.listdir(tree["ro"])) == ["data.txt", "other.txt", "sub"]


def test_read_write_dir_allows_every_change(tree: dict[str, str]) -> None:
    seen = _confined(
        """
        landlock.restrict_self([], [P["rw"]])
        rw = P["rw"]
        attempt("read", read, rw + "/data.txt")
        attempt("write", write, rw + "/data.txt")
        attempt("truncate", os.truncate, rw + "/data.txt", 1)
        attempt("create", write, rw + "/new.txt")
        attempt("rename", os.rename, rw + "/new.txt", rw + "/renamed.txt")
        attempt("mkdir", os.mkdir, rw + "/made")
        attempt("move into subdir", os.rename, rw + "/renamed.txt", rw + "/made/moved.txt")
        attempt("link", os.link, rw + "/made/moved.txt", rw + "/hard.txt")
        attempt("symlink", os.symlink, "data.txt", rw + "/soft")
        attempt("mkfifo", os.mkfifo, rw + "/fifo")
        attempt("remove", os.remove, rw + "/made/moved.txt")
        attempt("rmdir", os.rmdir, rw + "/made")
        """,
        tree,
    )
    assert set(seen.values()) == {"ok"}, seen
    assert sorted(os.listdir(tree["rw"])) == ["data.txt", "fifo", "hard.txt", "soft"]
    assert Path(tree["rw"], "data.txt").read_bytes() == b"d"


def test_device_nodes_are_refused_though_the_capability_allows_them(
    tree: dict[str, str], tmp_path: Path
) -> None:
    control = tmp_path / "control-null"
    try:
        os.mknod(control, 0o600 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("no CAP_MKNOD here: the kernel refuses before Landlock is asked")
    seen = _confined(
        """
        landlock.restrict_self([], [P["rw"]])
        char, block = 0o600 | 0o020000, 0o600 | 0o060000
        attempt("char", os.mknod, P["rw"] + "/null", char, os.makedev(1, 3))
        attempt("block", os.mknod, P["rw"] + "/loop", block, os.makedev(7, 0))
        attempt("fifo", os.mknod, P["rw"] + "/fifo", 0o600 | 0o010000)
        """,
        tree,
    )
    assert seen == {"char": "EACCES", "block": "EACCES", "fifo": "ok"}


def test_files_cannot_be_moved_or_linked_out_of_read_only_dirs(tree: dict[str, str]) -> None:
    seen = _confined(
        """
        landlock.restrict_self([P["ro"]], [P["rw"]])
        attempt("link out", os.link, P["ro"] + "/data.txt", P["rw"] + "/linked.txt")
        attempt("rename out", os.rename, P["ro"] + "/data.txt", P["rw"] + "/moved.txt")
        attempt("rename in", os.rename, P["rw"] + "/data.txt", P["ro"] + "/moved.txt")
        """,
        tree,
    )
    # EXDEV when the only right missing is REFER (so `mv` falls back to a copy, which
    # Landlock then judges), EACCES when REMOVE_FILE or MAKE_REG is missing as well.
    link_refused = "EXDEV" if ABI >= 2 else "EACCES"
    assert seen == {"link out": link_refused, "rename out": "EACCES", "rename in": "EACCES"}
    assert sorted(os.listdir(tree["rw"])) == ["data.txt"]


def test_listed_device_opens_and_unlisted_does_not(tree: dict[str, str]) -> None:
    seen = _confined(
        """
        landlock.restrict_self([], [], ["/dev/null"])
        attempt("write null", write, "/dev/null")
        attempt("read null", read, "/dev/null")
        attempt("read zero", os.open, "/dev/zero", os.O_RDONLY)
        attempt("write zero", os.open, "/dev/zero", os.O_WRONLY)
        """,
        tree,
    )
    assert seen == {
        "write null": "ok",
        "read null": "ok",
        "read zero": "EACCES",
        "write zero": "EACCES",
    }


def test_programs_started_afterwards_inherit_the_restriction(tree: dict[str, str]) -> None:
    seen = _confined(
        f"""
        landlock.restrict_self([*{SYSTEM!r}, P["ro"]], [])
        for label, path in (("inside", P["ro"]), ("outside", P["outside"])):
            done = subprocess.run(["/bin/cat", path + "/data.txt"], capture_output=True, text=True)
            print(f"{{label}}:", done.returncode, done.stdout.strip(), done.stderr.strip())
        """,
        tree,
    )
    assert seen["inside"] == "0 data "
    assert seen["outside"].startswith("1  ")
    assert "Permission denied" in seen["outside"]


def test_paths_that_do_not_exist_are_skipped(tree: dict[str, str]) -> None:
    seen = _confined(
        """
        missing = [P["ro"] + "/nothing", P["ro"] + "/data.txt/below"]
        abi = landlock.restrict_self([*missing, P["ro"]], missing, ["/dev/no-such-device"])
        print("abi:", abi)
        attempt("read", read, P["ro"] + "/data.txt")
        attempt("read outside", read, P["outside"] + "/data.txt")
        """,
        tree,
    )
    assert seen == {"abi": str(ABI), "read": "ok", "read outside": "EACCES"}


def test_rules_on_single_files_carry_only_file_rights(tree: dict[str, str]) -> None:
    seen = _confined(
        """
        landlock.restrict_self([P["ro"] + "/data.txt"], [P["rw"] + "/data.txt"])
        attempt("read listed", read, P["ro"] + "/data.txt")
        attempt("read sibling", read, P["ro"] + "/other.txt")
        attempt("write listed", write, P["rw"] + "/data.txt")
        attempt("truncate listed", os.truncate, P["rw"] + "/data.txt", 0)
        attempt("create beside", write, P["rw"] + "/new.txt")
        attempt("remove listed", os.remove, P["rw"] + "/data.txt")
        """,
        tree,
    )
    assert seen == {
        "read listed": "ok",
        "read sibling": "EACCES",
        "write listed": "ok",
        "truncate listed": "ok",
        "create beside": "EACCES",
        "remove listed": "EACCES",
    }


@pytest.mark.skipif(ABI < 6, reason="scopes came with Landlock ABI 6")
def test_signals_and_abstract_sockets_stay_inside_the_domain(tree: dict[str, str]) -> None:
    name = f"\0toolrun-landlock-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(name)
        listener.listen(1)
        seen = _confined(
            f"""
            attempt("signal before", os.kill, os.getppid(), 0)
            landlock.restrict_self([], [])
            attempt("signal after", os.kill, os.getppid(), 0)
            attempt("signal self", os.kill, os.getpid(), 0)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                attempt("connect", client.connect, {name!r})
            """,
            tree,
        )
    assert seen == {
        "signal before": "ok",
        "signal after": "EPERM",
        "signal self": "ok",
        "connect": "EPERM",
    }


def test_failure_raises_landlock_error_with_errno_and_leaks_no_descriptor(
    tree: dict[str, str],
) -> None:
    # The kernel stacks at most 16 domains; the next restrict_self fails after its rules
    # (and their descriptors) are made.
    seen = _confined(
        """
        def lowest_free_fd():
            probe = os.dup(0)
            os.close(probe)
            return probe

        before = lowest_free_fd()
        for layer in range(1, 40):
            try:
                landlock.restrict_self([P["ro"]], [P["rw"]], ["/dev/null"])
            except landlock.LandlockError as error:
                print("layer:", layer)
                print("errno:", errno.errorcode[error.errno])
                print("is OSError:", isinstance(error, OSError))
                print("message:", error.strerror)
                break
        print("fd leaked:", lowest_free_fd() != before)
        """,
        tree,
    )
    assert 2 <= int(seen["layer"]) <= 17
    assert seen["errno"] == "E2BIG"
    assert seen["is OSError"] == "True"
    assert seen["message"].startswith("landlock_restrict_self: ")
    assert seen["fd leaked"] == "False"
